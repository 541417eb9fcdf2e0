//! `etcdlock queue put NAME`: add a task to a task queue and print its id.

use crate::args::Put;
use crate::connect;
use crate::exit::{Exit, USAGE};
use etcdlock::{QueueOptions, TaskOptions, MAX_TASK_ID_LEN, MAX_TASK_PAYLOAD_LEN, MAX_TTL_SECS};
use std::io::Read;

pub async fn put(args: Put) -> Exit {
    // Checked before anything is read or sent, as the core would check them after connecting.
    if let Err(e) = check(&args) {
        return e;
    }
    let payload = match &args.data {
        Some(text) => text.clone().into_bytes(),
        None => match read_stdin() {
            Ok(p) => p,
            Err(e) => return e,
        },
    };
    let client = match connect::connect(&args.conn).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let opts = TaskOptions { id: args.id.clone(), priority: args.priority, delay: args.delay };
    // The TTL is only that of the lease the put's first step is on, revoked by the close.
    let put = async { client.queue(args.name.as_str(), QueueOptions::default())?.put(&payload, opts).await };
    let r = put.await;
    client.close().await;
    match r {
        Ok(id) => {
            println!("{id}");
            Exit::ok(0)
        }
        Err(e) => e.into(),
    }
}

fn check(args: &Put) -> Result<(), Exit> {
    etcdlock::check_lock_name(args.name.as_bytes())?;
    if let Some(id) = &args.id {
        if id.is_empty() || id.len() > MAX_TASK_ID_LEN || id.contains(['\n', '\0']) {
            return Err(Exit::fail(USAGE, format!("--id must be 1 to {MAX_TASK_ID_LEN} bytes without a newline, got {id:?}")));
        }
    }
    if args.delay.is_some_and(|d| d.as_secs_f64() > MAX_TTL_SECS as f64) {
        return Err(Exit::fail(USAGE, format!("--delay must be at most {MAX_TTL_SECS} seconds (etcd's largest lease TTL)")));
    }
    if args.data.as_ref().is_some_and(|d| d.len() > MAX_TASK_PAYLOAD_LEN) {
        return Err(too_large());
    }
    Ok(())
}

/// Stdin to its end, refused past the largest payload.
fn read_stdin() -> Result<Vec<u8>, Exit> {
    let mut payload = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_TASK_PAYLOAD_LEN as u64 + 1)
        .read_to_end(&mut payload)
        .map_err(|e| Exit::fail(USAGE, format!("cannot read the payload from stdin: {e}")))?;
    if payload.len() > MAX_TASK_PAYLOAD_LEN {
        return Err(too_large());
    }
    Ok(payload)
}

fn too_large() -> Exit {
    Exit::fail(USAGE, format!("the payload must be at most {MAX_TASK_PAYLOAD_LEN} bytes"))
}
