//! `etcdlock fence check FENCE`: whether the acquisition a fence names still holds.

use crate::args::FenceCheck;
use crate::connect;
use crate::exit::{Exit, USAGE};
use etcdlock::Fence;

pub async fn check(args: FenceCheck) -> Exit {
    let fence = match Fence::parse(args.fence.trim()) {
        Ok(f) => f,
        Err(e) => return Exit::fail(USAGE, e.message().to_string()),
    };
    let client = match connect::connect(&args.conn).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let r = client.check_fence(&fence).await;
    client.close().await;
    let name = String::from_utf8_lossy(&fence.name).into_owned();
    match r {
        Ok(true) => {
            println!("{name:?}: token {} holds", fence.token);
            Exit::ok(0)
        }
        Ok(false) => {
            println!("{name:?}: token {} does not hold", fence.token);
            Exit::ok(1)
        }
        Err(e) => e.into(),
    }
}
