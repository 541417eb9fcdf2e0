//! `etcdlock status NAME`: the holder and the queue in order, as a table or as JSON.

use crate::args::Status;
use crate::exit::Exit;
use crate::{connect, value};
use etcdlock::{LockState, QueueEntry};

pub async fn main(args: Status) -> Exit {
    let client = match connect::connect(&args.conn).await {
        Ok(c) => c,
        Err(e) => return e,
    };
    let state = client.inspect(args.name.as_str()).await;
    client.close().await;
    let state = match state {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    let now = value::now_ms();
    if args.json {
        println!("{}", json(&args.name, &state, now));
    } else {
        print!("{}", table(&args.name, &state, now));
    }
    Exit::ok(if state.holder.is_some() { 0 } else { 1 })
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
fn string(bytes: &[u8]) -> String {
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
