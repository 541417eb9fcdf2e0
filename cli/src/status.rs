//! `etcdlock status NAME`: the holder and the queue in order, as a table or as JSON; and when
//! NAME is a task queue, its counts, its claims and the workers waiting for a task; when it is a
//! pool, its slots (`status_pool.rs`). With `--prefix`, every name under a prefix
//! (`status_all.rs`).

use crate::args::Status;
use crate::exit::Exit;
use crate::{connect, value};
use etcdlock::{ClaimInfo, Client, LockState, QueueEntry, QueueOptions, QueueStats};

pub async fn main(args: Status) -> Exit {
    let client = match connect::connect(&args.conn).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let name = match (&args.name, &args.prefix) {
        (Some(name), _) => name.clone(),
        (None, Some(prefix)) => return crate::status_all::main(client, prefix, args.json).await,
        (None, None) => return Exit::fail(2, "etcdlock status: give a NAME or --prefix PREFIX"),
    };
    let args = Named { name, json: args.json };
    let read = async {
        let pool = crate::status_pool::read(&client, &args.name).await?;
        Ok::<_, etcdlock::Error>((client.inspect(args.name.as_str()).await?, tasks(&client, &args.name).await?, pool))
    };
    let r = read.await;
    client.close().await;
    let (state, tasks, pool) = match r {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    let now = value::now_ms();
    if args.json {
        let mut out = json(&args.name, &state, now);
        if let Some(t) = &tasks {
            out.insert_str(out.len() - 1, &format!(r#","queue":{}"#, tasks_json(t, now)));
        }
        if let Some(p) = &pool {
            out.insert_str(out.len() - 1, &format!(r#","pool":{}"#, crate::status_pool::json(p)));
        }
        println!("{out}");
    } else {
        if state.holder.is_some() || (tasks.is_none() && pool.is_none()) {
            print!("{}", table(&args.name, &state, now));
        }
        if let Some(t) = &tasks {
            print!("{}", tasks_table(&args.name, t, now));
        }
        if let Some(p) = &pool {
            print!("{}", crate::status_pool::table(&args.name, p, now));
        }
    }
    Exit::ok(if state.holder.is_some() || tasks.is_some() || pool.is_some() { 0 } else { 1 })
}

/// `status NAME`'s arguments.
struct Named {
    name: String,
    json: bool,
}

/// A task queue's state, read in a few requests.
struct Tasks {
    stats: QueueStats,
    claims: Vec<ClaimInfo>,
    /// Workers waiting to claim (the queue of the lock `NAME/workers`), the first one watching.
    workers: Vec<QueueEntry>,
}

/// `name` as a task queue: `None` unless something is under `NAME/items/`, `claim/`, `dead/`
/// or `workers/`.
async fn tasks(client: &Client, name: &str) -> etcdlock::Result<Option<Tasks>> {
    let q = client.queue(name, QueueOptions::default())?;
    let (stats, claims, workers) = tokio::try_join!(q.stats(), q.claims(), client.inspect(format!("{name}/workers")))?;
    let workers: Vec<QueueEntry> = workers.holders.into_iter().chain(workers.waiters).collect();
    let any = stats.pending + stats.delayed + stats.claimed + stats.dead > 0 || !claims.is_empty() || !workers.is_empty();
    Ok(any.then_some(Tasks { stats, claims, workers }))
}

fn tasks_table(name: &str, t: &Tasks, now: u64) -> String {
    let s = &t.stats;
    let mut out = format!(
        "{name}: task queue, {} pending, {} delayed, {} claimed, {} dead (revision {})\n",
        s.pending, s.delayed, s.claimed, s.dead, s.revision
    );
    if s.pending > 0 {
        let by: Vec<String> = s.pending_by_priority.iter().rev().map(|(p, n)| format!("{p}: {n}")).collect();
        out += &format!("pending by priority: {}\n", by.join(", "));
    }
    let claims: Vec<&ClaimInfo> = t.claims.iter().filter(|c| !c.delayed).collect();
    if !claims.is_empty() {
        out += &format!("{:<32} {:<32} {:>8} {:<17} {:>8}\n", "task", "worker", "token", "lease", "for");
        for c in claims {
            let (worker, since) = value::worker_since(&c.worker);
            let age = since.map_or("-".into(), |t| format!("{:.1}s", now.saturating_sub(t) as f64 / 1000.0));
            out += &format!("{:<32} {:<32} {:>8} {:<17x} {:>8}\n", c.id, worker, c.token, c.lease, age);
        }
    }
    if !t.workers.is_empty() {
        let names: Vec<String> = t.workers.iter().map(|w| value::worker_since(&w.value).0).collect();
        out += &format!("{} waiting for a task: {}\n", t.workers.len(), names.join(", "));
    }
    out
}

fn tasks_json(t: &Tasks, now: u64) -> String {
    let s = &t.stats;
    let by: Vec<String> = s.pending_by_priority.iter().rev().map(|(p, n)| format!(r#""{p}":{n}"#)).collect();
    let claims: Vec<String> = t
        .claims
        .iter()
        .filter(|c| !c.delayed)
        .map(|c| {
            let (worker, since) = value::worker_since(&c.worker);
            format!(
                r#"{{"id":{},"worker":{},"fencing_token":{},"lease":"{:x}","seconds":{}}}"#,
                string(c.id.as_bytes()),
                string(worker.as_bytes()),
                c.token,
                c.lease,
                since.map_or("null".into(), |t| format!("{:.3}", now.saturating_sub(t) as f64 / 1000.0))
            )
        })
        .collect();
    let workers: Vec<String> = t.workers.iter().map(|w| string(value::worker_since(&w.value).0.as_bytes())).collect();
    format!(
        r#"{{"pending":{},"pending_by_priority":{{{}}},"delayed":{},"claimed":{},"dead":{},"revision":{},"claims":[{}],"waiting_workers":[{}]}}"#,
        s.pending,
        by.join(","),
        s.delayed,
        s.claimed,
        s.dead,
        s.revision,
        claims.join(","),
        workers.join(",")
    )
}

/// The queue in order, each with its position and whether it holds.
fn entries(state: &LockState) -> impl Iterator<Item = (usize, bool, &QueueEntry)> {
    let holds = state.holders.iter().map(|e| (true, e));
    holds.chain(state.waiters.iter().map(|e| (false, e))).enumerate().map(|(i, (h, e))| (i, h, e))
}

/// Seconds since the entry began holding or waiting, if its value records it.
fn age(holds: bool, e: &QueueEntry, now: u64) -> Option<f64> {
    let (queued, held) = value::times(&e.value);
    let since = if holds { held.or(queued) } else { queued }?;
    Some(now.saturating_sub(since) as f64 / 1000.0)
}

fn table(name: &str, state: &LockState, now: u64) -> String {
    let mut out = match &state.holder {
        None => format!("{name}: free (revision {})\n", state.revision),
        Some(_) if state.holders.len() > 1 => {
            format!("{name}: held by {}, {} waiting (revision {})\n", state.holders.len(), state.waiters.len(), state.revision)
        }
        Some(_) => format!("{name}: held, {} waiting (revision {})\n", state.waiters.len(), state.revision),
    };
    if state.holder.is_none() {
        return out;
    }
    out += &format!("{:<4} {:<40} {:>8} {:<17} {:>6} {:>9} {:>8}  {:<10} {}\n", "pos", "key", "token", "lease", "ttl", "", "for", "mode", "value");
    for (i, holds, e) in entries(state) {
        let ttl = e.ttl.map_or("gone".into(), |t| format!("{t}s"));
        let verb = if holds { "holding" } else { "waiting" };
        let age = age(holds, e, now).map_or("-".into(), |s| format!("{s:.1}s"));
        out += &format!(
            "{:<4} {:<40} {:>8} {:<17x} {:>6} {:>9} {:>8}  {:<10} {}\n",
            i,
            String::from_utf8_lossy(&e.key),
            e.fencing_token,
            e.lease,
            ttl,
            verb,
            age,
            if e.mode.is_empty() { "-" } else { &e.mode },
            String::from_utf8_lossy(&e.value)
        );
    }
    out
}

fn json(name: &str, state: &LockState, now: u64) -> String {
    let entry = |(i, holds, e): (usize, bool, &QueueEntry)| {
        format!(
            r#"{{"position":{i},"holds":{holds},"key":{},"fencing_token":{},"lease":"{:x}","ttl":{},"seconds":{},"mode":{},"value":{}}}"#,
            string(&e.key),
            e.fencing_token,
            e.lease,
            e.ttl.map_or("null".into(), |t| t.to_string()),
            age(holds, e, now).map_or("null".into(), |s| format!("{s:.3}")),
            string(e.mode.as_bytes()),
            string(&e.value)
        )
    };
    let (holders, waiters): (Vec<_>, Vec<_>) = entries(state).partition(|(_, holds, _)| *holds);
    let list = |v: Vec<(usize, bool, &QueueEntry)>| v.into_iter().map(entry).collect::<Vec<_>>().join(",");
    format!(
        r#"{{"name":{},"held":{},"revision":{},"holders":[{}],"waiters":[{}]}}"#,
        string(name.as_bytes()),
        state.holder.is_some(),
        state.revision,
        list(holders),
        list(waiters)
    )
}

/// A JSON string of (lossy UTF-8) bytes.
pub fn string(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '"' => s += "\\\"",
            '\\' => s += "\\\\",
            c if (c as u32) < 0x20 => s += &format!("\\u{:04x}", c as u32),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(token: i64, value: &[u8]) -> QueueEntry {
        QueueEntry { key: format!("jobs/{token:x}").into_bytes(), fencing_token: token, lease: 0x1f, ttl: Some(9), value: value.to_vec(), mode: String::new() }
    }

    #[test]
    fn json_has_the_queue_in_order_and_escapes_values() {
        let holder = entry(5, b"etcdlock host=a pid=1 queued=1000 held=2000");
        let state = LockState { holder: Some(holder.clone()), holders: vec![holder], waiters: vec![entry(7, b"say \"hi\"\n")], revision: 9 };
        let out = json("jobs", &state, 4000);
        assert_eq!(
            out,
            r#"{"name":"jobs","held":true,"revision":9,"holders":[{"position":0,"holds":true,"key":"jobs/5","fencing_token":5,"lease":"1f","ttl":9,"seconds":2.000,"mode":"","value":"etcdlock host=a pid=1 queued=1000 held=2000"}],"waiters":[{"position":1,"holds":false,"key":"jobs/7","fencing_token":7,"lease":"1f","ttl":9,"seconds":null,"mode":"","value":"say \"hi\"\u000a"}]}"#
        );
        assert_eq!(json("x", &LockState::default(), 0), r#"{"name":"x","held":false,"revision":0,"holders":[],"waiters":[]}"#);
    }
}
