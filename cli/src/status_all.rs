//! `etcdlock status --prefix PREFIX`: every name under PREFIX and its kind (lock, semaphore,
//! rwlock, queue, pool, once, service) in one table, or as JSON, from one read at one revision
//! (`Client::survey`). `etcdlock status NAME` shows one of them in detail.

use crate::exit::Exit;
use crate::status::string;
use etcdlock::{Client, NameKind, NameSummary};

pub async fn main(client: Client, prefix: &str, json: bool) -> Exit {
    let r = client.survey(prefix).await;
    client.close().await;
    let (names, revision) = match r {
        Ok(r) => r,
        Err(e) => return e.into(),
    };
    if json {
        println!("{}", to_json(prefix, &names, revision));
    } else {
        print!("{}", table(prefix, &names, revision));
    }
    Exit::ok(if names.is_empty() { 1 } else { 0 })
}

/// The kind-specific counts: a queue's pending items and dead letters, a once job's done periods.
fn extra(n: &NameSummary) -> (String, String) {
    let dash = || "-".to_string();
    match n.kind {
        NameKind::TaskQueue => (n.pending.to_string(), format!("{} dead", n.done_or_dead)),
        NameKind::Once => (dash(), format!("{} done", n.done_or_dead)),
        _ => (dash(), dash()),
    }
}

fn kind(n: &NameSummary) -> String {
    match n.kind {
        NameKind::Semaphore { permits } => format!("semaphore({permits})"),
        k => k.as_str().to_string(),
    }
}

fn table(prefix: &str, names: &[NameSummary], revision: i64) -> String {
    if names.is_empty() {
        return format!("nothing of etcdlock's under {prefix:?} (revision {revision})\n");
    }
    let width = names.iter().map(|n| String::from_utf8_lossy(&n.name).chars().count()).max().unwrap_or(0).clamp(4, 60);
    let mut out = format!("{:<width$}  {:<13} {:>7} {:>7} {:>7}  {}\n", "name", "kind", "holding", "waiting", "pending", "periods/dead");
    for n in names {
        let (pending, more) = extra(n);
        out += &format!(
            "{:<width$}  {:<13} {:>7} {:>7} {:>7}  {}\n",
            String::from_utf8_lossy(&n.name),
            kind(n),
            n.holders,
            n.waiters,
            pending,
            more
        );
    }
    out + &format!("{} names under {prefix:?} (revision {revision})\n", names.len())
}

fn to_json(prefix: &str, names: &[NameSummary], revision: i64) -> String {
    let items: Vec<String> = names
        .iter()
        .map(|n| {
            let mut o = format!(r#"{{"name":{},"kind":"{}","holders":{},"waiters":{}"#, string(&n.name), n.kind.as_str(), n.holders, n.waiters);
            match n.kind {
                NameKind::Semaphore { permits } => o += &format!(r#","permits":{permits}"#),
                NameKind::TaskQueue => o += &format!(r#","pending":{},"dead":{}"#, n.pending, n.done_or_dead),
                NameKind::Once => o += &format!(r#","done_periods":{}"#, n.done_or_dead),
                _ => {}
            }
            o + "}"
        })
        .collect();
    format!(r#"{{"prefix":{},"revision":{revision},"names":[{}]}}"#, string(prefix.as_bytes()), items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(name: &str, kind: NameKind, holders: u64, waiters: u64, pending: u64, dd: u64) -> NameSummary {
        NameSummary { name: name.into(), kind, holders, waiters, pending, done_or_dead: dd }
    }

    #[test]
    fn json_names_each_kind_with_its_own_counts() {
        let names = [
            n("a/q", NameKind::TaskQueue, 1, 2, 3, 4),
            n("a/s", NameKind::Semaphore { permits: 2 }, 2, 0, 0, 0),
            n("a/\"j\"", NameKind::Once, 0, 0, 0, 5),
        ];
        assert_eq!(
            to_json("a/", &names, 9),
            r#"{"prefix":"a/","revision":9,"names":[{"name":"a/q","kind":"queue","holders":1,"waiters":2,"pending":3,"dead":4},{"name":"a/s","kind":"semaphore","holders":2,"waiters":0,"permits":2},{"name":"a/\"j\"","kind":"once","holders":0,"waiters":0,"done_periods":5}]}"#
        );
        assert_eq!(to_json("", &[], 3), r#"{"prefix":"","revision":3,"names":[]}"#);
        let t = table("a/", &names, 9);
        assert!(t.contains("semaphore(2)") && t.contains("4 dead") && t.contains("5 done") && t.ends_with("3 names under \"a/\" (revision 9)\n"), "{t}");
    }
}
