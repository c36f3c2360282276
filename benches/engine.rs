//! `make bench`, native part: routing and engine throughput, and RAM after many messages.
//!
//! Run by scripts/bench.sh as `cargo bench --bench engine -- --reps N` (harness = false: plain
//! std, `Instant` is fine here and never in src/core). Prints one JSON object on stdout.
//!
//! - Throughput: a world on a `MemoryStore` with 3, 10 and 100 agents and an LLM that answers
//!   at once; a human sends a public message (every agent answers it), the queue runs until
//!   idle, repeat until `MESSAGES` messages are published. "Routed" = published messages
//!   (the human's and the replies): each one is routed against every agent. Median of `reps`
//!   fresh worlds, with min and max.
//! - RAM: VmRSS from /proc/self/status at the start and after 100, 1,000 and 10,000 published
//!   messages, each mode in a fresh child process (this binary re-run with `--memory on|off`)
//!   so one run's freed-but-kept heap does not blur the next. `off` = session mode off: nothing of the
//!   conversation is stored, so what remains is the engine's own RAM (agents' memory windows,
//!   bounded by `historyLimit`) and must stay flat. `on` = session mode on: the memory store
//!   keeps every message, so RSS grows with the chat by design (reported per message).
//!
//! The LLM is `InstantLlm` below, not `core::testing::ScriptedLlm`: the scripted double records
//! every call with its input window (its job in tests), which would grow RAM by itself and
//! would need one scripted reply per call queued up front.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::Cell;
use std::process::Command;
use std::rc::Rc;
use std::time::Instant;

use agent_world_wasm::core::clock::{ManualClock, SequentialIds};
use agent_world_wasm::core::engine::{Services, World};
use agent_world_wasm::core::events::{Event, Subscription, Topic};
use agent_world_wasm::core::llm::types::{CallSettings, ChatMessage, LlmError, LlmEvent};
use agent_world_wasm::core::llm_client::{CancelToken, LlmClient};
use agent_world_wasm::core::memory_store::MemoryStore;
use agent_world_wasm::core::model::{CreateWorld, NewAgent};
use agent_world_wasm::core::store::LocalBoxFuture;
use futures_executor::block_on;
use serde_json::{json, Value};

/// Published messages per throughput repetition.
const MESSAGES: u64 = 10_000;
const AGENT_COUNTS: [usize; 3] = [3, 10, 100];
const HUMAN_MESSAGE: &str = "Hello everyone, what should we build next? Keep it short.";
const REPLY: &str = "I would start with the smallest useful piece and measure it.";

/// Answers every call at once with one text chunk; records nothing.
struct InstantLlm;

impl LlmClient for InstantLlm {
    fn call<'a>(
        &'a self,
        settings: &'a CallSettings,
        _messages: Vec<ChatMessage>,
        on_event: &'a mut dyn FnMut(LlmEvent),
        cancel: CancelToken,
    ) -> LocalBoxFuture<'a, Result<(), LlmError>> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(LlmError::Aborted {
                    provider: settings.provider.clone(),
                });
            }
            on_event(LlmEvent::Text(REPLY.to_string()));
            on_event(LlmEvent::Done {
                finish_reason: Some("stop".into()),
            });
            Ok(())
        })
    }
}

struct Bench {
    world: World,
    clock: Rc<ManualClock>,
    published: Rc<Cell<u64>>,
    _sub: Subscription,
}

fn bench_world(agents: usize, session: bool) -> Bench {
    let clock = Rc::new(ManualClock::new(1_795_000_000_000));
    let svc = Services {
        store: Rc::new(MemoryStore::new()),
        llm: Rc::new(InstantLlm),
        clock: clock.clone(),
        ids: Rc::new(SequentialIds::new("id")),
    };
    let world = block_on(World::create(
        svc,
        CreateWorld {
            name: format!("Bench {agents}"),
            ..Default::default()
        },
    ))
    .unwrap();
    for i in 0..agents {
        block_on(world.add_agent(NewAgent {
            name: format!("agent-{i}"),
            provider: "openai".into(),
            model: "instant".into(),
            ..Default::default()
        }))
        .unwrap();
    }
    if !session {
        block_on(world.set_session_mode(false)).unwrap();
    }
    let published = Rc::new(Cell::new(0u64));
    let count = published.clone();
    let sub = world.on(
        Topic::Message,
        Rc::new(move |_: &Event| {
            count.set(count.get() + 1);
            Ok(())
        }),
    );
    Bench {
        world,
        clock,
        published,
        _sub: sub,
    }
}

impl Bench {
    /// Human messages until `target` messages are published; returns the human messages sent.
    fn drive(&self, target: u64) -> u64 {
        let mut sent = 0;
        while self.published.get() < target {
            self.clock.advance(1_000);
            block_on(self.world.send(HUMAN_MESSAGE, None)).unwrap();
            block_on(self.world.run_until_idle());
            sent += 1;
        }
        sent
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn throughput(agents: usize, reps: usize, messages: u64) -> Value {
    let mut rates = Vec::new();
    let mut raw = Vec::new();
    let mut replies_per_human = 0.0;
    for _ in 0..reps {
        let b = bench_world(agents, true);
        let t = Instant::now();
        let sent = b.drive(messages);
        let secs = t.elapsed().as_secs_f64();
        let published = b.published.get();
        replies_per_human = (published - sent) as f64 / sent as f64;
        rates.push(published as f64 / secs);
        raw.push(json!({ "published": published, "human": sent, "seconds": secs }));
    }
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rates.iter().copied().fold(0.0, f64::max);
    let med = median(&mut rates);
    json!({
        "agents": agents,
        "messages_per_s": med,
        "us_per_message": 1e6 / med,
        "us_per_message_agent": 1e6 / med / agents as f64,
        "min": min,
        "max": max,
        "replies_per_human_message": replies_per_human,
        "reps": raw,
    })
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Child mode: RSS at the start and after 100, 1,000 and 10,000 published messages with 10
/// agents (growth is reported from 100, once the agents' memory windows are full).
fn memory(session: bool) -> Value {
    let b = bench_world(10, session);
    let before = rss_kib();
    b.drive(100);
    let at_100 = (b.published.get(), rss_kib());
    b.drive(1_000);
    let at_1k = (b.published.get(), rss_kib());
    b.drive(10_000);
    let at_10k = (b.published.get(), rss_kib());
    let window: usize = b
        .world
        .agents()
        .iter()
        .map(|a| b.world.agent_memory(&a.id).map_or(0, |m| m.len()))
        .sum();
    json!({
        "session": session,
        "agents": 10,
        "rss_kib_start": before,
        "messages_100": at_100.0, "rss_kib_100": at_100.1,
        "messages_1k": at_1k.0, "rss_kib_1k": at_1k.1,
        "messages_10k": at_10k.0, "rss_kib_10k": at_10k.1,
        "memory_window_entries": window,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if let Some(mode) = arg("--memory") {
        println!("{}", memory(mode == "on"));
        return;
    }
    let reps: usize = arg("--reps").and_then(|r| r.parse().ok()).unwrap_or(5);
    let exe = std::env::current_exe().unwrap();
    let child = |mode: &str| -> Value {
        let out = Command::new(&exe)
            .args(["--memory", mode])
            .output()
            .unwrap();
        assert!(out.status.success(), "memory child failed: {out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let memory = json!({ "session_off": child("off"), "session_on": child("on") });
    let messages: u64 = arg("--messages")
        .and_then(|r| r.parse().ok())
        .unwrap_or(MESSAGES);
    let routing: Vec<Value> = AGENT_COUNTS
        .iter()
        .map(|&n| throughput(n, reps, messages))
        .collect();
    println!(
        "{}",
        json!({
            "messages_per_rep": messages,
            "reps": reps,
            "routing": routing,
            "memory": memory,
        })
    );
}
