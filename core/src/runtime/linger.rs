//! Calls into the runtime from a thread outside it (a binding's event loop), and the runtime
//! side of their round trip: the worker that hands a reply over stays awake for that thread's
//! next call, for up to [`LINGER`], instead of parking at once and being woken for it.
//!
//! A loop such as `await lock(); await release();` makes its next call soon after each reply.
//! A worker parked by then has to be woken for it, which on a VM (a halted vCPU woken by an
//! interrupt) puts a wake-up on every call's critical path; a lingering worker picks the call
//! up almost at once. That makes a Node lock/release loop much faster than the same build
//! without lingering. (The caller's own spinning,
//! [`spin`](crate::runtime::spin), covers the other direction: the reply reaching a caller that is awake.)
//!
//! Only while it pays: not while more than `FEW` outside calls are in flight (their replies
//! keep the workers busy anyway), not when spinning is off (`ETCDLOCK_SPIN_US=0`), and not
//! while fewer than a quarter of recent calls came within [`LINGER`] of the reply before them
//! (a program that calls now and then, where lingering would only burn CPU).

use crate::runtime::clock;
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::spin::{self, HitRate};
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a worker waits for the next call: several times what a Node `await` between two
/// calls takes, and still short next to a round trip to etcd.
pub const LINGER: Duration = Duration::from_micros(150);

/// Lingering stops while more outside calls than this are in flight.
const FEW: usize = 2;

/// Outside calls queued on the runtime so far: a change tells a lingering worker to stop.
static QUEUED: AtomicU64 = AtomicU64::new(0);
/// Outside calls whose reply has not been handed over yet.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// When the last reply was handed over ([`clock::now`] in nanoseconds; 0: never).
static LAST_REPLY: AtomicU64 = AtomicU64::new(0);
/// Share of recent calls that came within [`LINGER`] of the reply before them.
static PROMPT: HitRate = HitRate::new();

/// Runs `fut` on the shared runtime for a caller outside it; `reply` hands its outcome over
/// (on a worker: it must not block), exactly once: `Internal` if `fut` panicked, `Closed` if
/// the runtime shut down first. The worker then lingers for the caller's next call when that
/// pays (see the module documentation).
pub fn spawn_call<T, F, R>(fut: F, reply: R)
where
    T: Send + 'static,
    F: Future<Output = Result<T>> + Send + 'static,
    R: FnOnce(Result<T>) + Send + 'static,
{
    let call = Call::start();
    let mut reply = Reply(Some(reply), std::marker::PhantomData);
    crate::runtime::spawn(async move {
        let outcome = fut.await;
        let linger = call.replying();
        reply.send(outcome);
        linger.run().await;
    });
    // Counted once the task is queued: a worker that stopped lingering earlier could find
    // the queue still empty and park.
    QUEUED.fetch_add(1, Ordering::AcqRel);
}

/// Delivers a call's outcome once; from its destructor if the task never got that far.
struct Reply<T, R: FnOnce(Result<T>)>(Option<R>, std::marker::PhantomData<fn(T)>);

impl<T, R: FnOnce(Result<T>)> Reply<T, R> {
    fn send(&mut self, outcome: Result<T>) {
        if let Some(reply) = self.0.take() {
            reply(outcome);
        }
    }
}

impl<T, R: FnOnce(Result<T>)> Drop for Reply<T, R> {
    fn drop(&mut self) {
        let e = if std::thread::panicking() {
            Error::new(ErrorKind::Internal, "etcdlock task panicked")
        } else {
            Error::new(ErrorKind::Closed, "the etcdlock runtime shut down")
        };
        self.send(Err(e));
    }
}

/// One outside call, until its reply is handed over (or its task is dropped).
struct Call;

impl Call {
    fn start() -> Call {
        let last = LAST_REPLY.load(Ordering::Acquire);
        if last != 0 {
            PROMPT.record(nanos(clock::now()).saturating_sub(last) <= nanos(LINGER));
        }
        IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        Call
    }

    /// Taken just before the reply is handed over.
    fn replying(self) -> Linger {
        let seen = QUEUED.load(Ordering::Acquire);
        let few = IN_FLIGHT.load(Ordering::Acquire) <= FEW;
        drop(self);
        LAST_REPLY.store(nanos(clock::now()), Ordering::Release);
        let window = LINGER.min(spin::window());
        Linger { seen, window: if few && PROMPT.worth_it() { window } else { Duration::ZERO } }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
    }
}

struct Linger {
    seen: u64,
    window: Duration,
}

impl Linger {
    /// Keeps the worker busy (yielding to every other task) until another outside call is
    /// queued or the window has passed; the worker then takes that call without a wake-up.
    async fn run(self) {
        if self.window.is_zero() {
            return;
        }
        let until = Instant::now() + self.window;
        while QUEUED.load(Ordering::Acquire) == self.seen && Instant::now() < until {
            tokio::task::yield_now().await;
        }
    }
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    // One test: the counters are process-wide, and tests run in parallel.
    #[test]
    fn every_call_is_answered_once_and_none_stays_in_flight() {
        let (tx, rx) = mpsc::channel();
        for i in 0..50u32 {
            let tx = tx.clone();
            spawn_call(async move { Ok(i * 2) }, move |v| tx.send(v.unwrap()).unwrap());
            // Some callers late, so that lingers both end early and run out.
            if i % 10 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        // A panicking call is answered too.
        let tx2 = tx.clone();
        fn boom() -> Result<u32> {
            panic!("on purpose")
        }
        spawn_call(async { boom() }, move |v| {
            tx2.send(if v.unwrap_err().kind() == ErrorKind::Internal { 1 } else { 2 }).unwrap()
        });
        drop(tx);
        let mut got: Vec<u32> = rx.iter().collect();
        got.sort();
        let mut want: Vec<u32> = (0..50).map(|i| i * 2).collect();
        want.push(1);
        want.sort();
        assert_eq!(got, want);
        // A call whose task is dropped before it replies is not in flight either.
        drop(Call::start());
        let deadline = Instant::now() + Duration::from_secs(10);
        while IN_FLIGHT.load(Ordering::Acquire) != 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(IN_FLIGHT.load(Ordering::Acquire), 0);
    }

    #[test]
    fn a_reply_is_sent_once_and_closed_when_dropped_unsent() {
        let (tx, rx) = mpsc::channel();
        let sender = |tx: mpsc::Sender<_>| Reply(Some(move |r: Result<()>| tx.send(r.map_err(|e| e.kind())).unwrap()), Default::default());
        let mut sent = sender(tx.clone());
        sent.send(Ok(()));
        drop(sent);
        drop(sender(tx));
        assert_eq!(rx.iter().collect::<Vec<_>>(), vec![Ok(()), Err(ErrorKind::Closed)]);
    }
}
