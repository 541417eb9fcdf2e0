//! etcdlock's spans as OpenTelemetry spans, through `tracing-opentelemetry`: a lock's acquire,
//! hold and release and an election's campaign and leadership, read back from the OpenTelemetry
//! SDK's in-memory exporter and printed with their attributes.
//!
//! `cargo run -p etcdlock --example opentelemetry` starts its own etcd on 127.0.0.1 unless
//! `ETCDLOCK_ENDPOINTS` names one. It exits non-zero if a span or an attribute is missing (the
//! test command runs it). In an application, the exporter is your collector's (e.g.
//! `opentelemetry_otlp::SpanExporter`, with `with_batch_exporter`) instead of the in-memory one,
//! and `tracing-opentelemetry`, `tracing-subscriber` and the SDK are your dependencies: the core
//! only emits `tracing` spans (`etcdlock::spans`).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::Value;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::prelude::*;

fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| &kv.value)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The OpenTelemetry side: a tracer provider and its exporter.
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    // The tracing side: etcdlock's spans (target `etcdlock`, level INFO) into that tracer.
    tracing_subscriber::registry()
        .with(tracing_subscriber::filter::Targets::new().with_target("etcdlock", tracing::Level::INFO))
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("etcdlock-example")))
        .init();

    let own = std::env::var("ETCDLOCK_ENDPOINTS").is_err().then(|| etcd_testkit::Etcd::start(1));
    let endpoints: Vec<String> = match &own {
        Some(etcd) => etcd.endpoints(),
        None => std::env::var("ETCDLOCK_ENDPOINTS")?.split(',').map(str::to_string).collect(),
    };
    let client = etcdlock::Client::connect(&endpoints, Default::default()).await?;
    let name = format!("example/otel-{}", std::process::id());
    let guard = client.mutex(name.clone(), 10)?.lock().await?;
    let token = guard.fencing_token();
    guard.release().await?;
    let leadership = client.election(format!("{name}-leader"), 10)?.campaign("me").await?;
    let led = leadership.fencing_token();
    leadership.resign().await?;
    client.close().await;
    provider.force_flush()?;

    let spans = exporter.get_finished_spans()?;
    for s in &spans {
        let attrs: Vec<String> = s.attributes.iter().filter(|kv| kv.key.as_str().starts_with("etcdlock.")).map(|kv| format!("{}={}", kv.key, kv.value)).collect();
        println!("{:<18} {}", s.name, attrs.join(" "));
    }
    let find = |span: &str, name: &str| spans.iter().find(|s| s.name == span && attr(s, "etcdlock.name").is_some_and(|v| v.as_str() == name));
    let mut missing = Vec::new();
    // Each span with its outcome and the fencing token of what it acquired, held or released.
    for (span, key, want, fence) in [
        ("etcdlock.acquire", name.clone(), "acquired", token),
        ("etcdlock.hold", name.clone(), "released", token),
        ("etcdlock.release", name.clone(), "released", token),
        ("etcdlock.campaign", format!("{name}-leader"), "acquired", led),
        ("etcdlock.lead", format!("{name}-leader"), "released", led),
    ] {
        let Some(s) = find(span, &key) else {
            missing.push(format!("no {span} span for {key}"));
            continue;
        };
        if !attr(s, "etcdlock.outcome").is_some_and(|v| v.as_str() == want) {
            missing.push(format!("{span} {key}: outcome {:?}, want {want}", attr(s, "etcdlock.outcome")));
        }
        if attr(s, "etcdlock.fencing_token").map(|v| v.as_str().into_owned()) != Some(fence.to_string()) {
            missing.push(format!("{span} {key}: fencing token {:?}, want {fence}", attr(s, "etcdlock.fencing_token")));
        }
    }
    // The hold links to its acquire (tracing's follows_from).
    if let (Some(hold), Some(acquire)) = (find("etcdlock.hold", &name), find("etcdlock.acquire", &name)) {
        if !hold.links.iter().any(|l| l.span_context.span_id() == acquire.span_context.span_id()) {
            missing.push("etcdlock.hold does not link to its etcdlock.acquire".into());
        }
    }
    drop(own);
    if missing.is_empty() {
        println!("ok: {} spans, every one expected with its attributes", spans.len());
        Ok(())
    } else {
        Err(missing.join("; ").into())
    }
}
