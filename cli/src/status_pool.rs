//! `etcdlock status NAME` of a pool: each slot free, held (by whom, since when, its token),
//! resting after its holder died (for how long more), and the requests waiting for slots.

use crate::status::string;
use crate::value;
use etcdlock::{Client, QueueEntry, SlotInfo, SlotState};

/// A pool's state: its slots and the requests waiting.
pub struct PoolState {
    slots: Vec<SlotInfo>,
    waiting: Vec<QueueEntry>,
}

/// `name` as a pool: `None` unless one is defined there.
pub async fn read(client: &Client, name: &str) -> etcdlock::Result<Option<PoolState>> {
    let Some(slots) = client.inspect_pool(name).await? else { return Ok(None) };
    let queue = client.inspect(format!("{name}/queue")).await?;
    Ok(Some(PoolState { slots, waiting: queue.holders.into_iter().chain(queue.waiters).collect() }))
}

fn count(p: &PoolState, f: impl Fn(&SlotState) -> bool) -> usize {
    p.slots.iter().filter(|s| f(&s.state)).count()
}

pub fn table(name: &str, p: &PoolState, now: u64) -> String {
    let held = count(p, |s| matches!(s, SlotState::Held { .. }));
    let resting = count(p, |s| matches!(s, SlotState::Resting { .. } | SlotState::Dead));
    let mut out = format!("{name}: pool of {} slots, {held} held, {resting} resting, {} free\n", p.slots.len(), p.slots.len() - held - resting);
    out += &format!("{:<24} {:<8} {:>8} {:<17} {:>6} {:<32} {:>8}\n", "slot", "state", "token", "lease", "ttl", "owner", "for");
    for s in &p.slots {
        let line = match &s.state {
            SlotState::Free => format!("{:<24} free\n", s.id),
            SlotState::Dead => format!("{:<24} resting  (its holder died; it rests once a request sees it)\n", s.id),
            SlotState::Resting { lease, ttl } => format!("{:<24} {:<8} {:>8} {:<17x} {:>6}\n", s.id, "resting", "-", lease, ttl_text(*ttl)),
            SlotState::Held { token, lease, ttl, owner, .. } => {
                let (who, since) = value::worker_since(owner.as_bytes());
                let age = since.map_or("-".into(), |t| format!("{:.1}s", now.saturating_sub(t) as f64 / 1000.0));
                format!("{:<24} {:<8} {:>8} {:<17x} {:>6} {:<32} {:>8}\n", s.id, "held", token, lease, ttl_text(*ttl), who, age)
            }
        };
        out += &line;
    }
    if !p.waiting.is_empty() {
        let who: Vec<String> = p.waiting.iter().map(|w| value::worker_since(&w.value).0).collect();
        out += &format!("{} request(s) waiting for slots: {}\n", p.waiting.len(), who.join(", "));
    }
    out
}

fn ttl_text(ttl: Option<i64>) -> String {
    ttl.map_or("-".into(), |t| format!("{t}s"))
}

pub fn json(p: &PoolState) -> String {
    let slots: Vec<String> = p
        .slots
        .iter()
        .map(|s| {
            let id = string(s.id.as_bytes());
            let ttl = |t: &Option<i64>| t.map_or("null".into(), |t| t.to_string());
            match &s.state {
                SlotState::Free => format!(r#"{{"slot":{id},"state":"free"}}"#),
                SlotState::Dead => format!(r#"{{"slot":{id},"state":"dead"}}"#),
                SlotState::Resting { lease, ttl: t } => format!(r#"{{"slot":{id},"state":"resting","lease":"{lease:x}","ttl":{}}}"#, ttl(t)),
                SlotState::Held { token, lease, ttl: t, acquisition, owner } => format!(
                    r#"{{"slot":{id},"state":"held","fencing_token":{token},"acquisition":{acquisition},"lease":"{lease:x}","ttl":{},"owner":{}}}"#,
                    ttl(t),
                    string(owner.as_bytes())
                ),
            }
        })
        .collect();
    let waiting: Vec<String> = p.waiting.iter().map(|w| string(value::worker_since(&w.value).0.as_bytes())).collect();
    format!(r#"{{"slots":[{}],"waiting":[{}]}}"#, slots.join(","), waiting.join(","))
}
