//! OTLP export of the message spans, compiled only with
//! the cargo feature `otlp` (off by default: the OpenTelemetry crates are
//! heavy to build and most sites only need the trace-id in the logs).
//!
//! Spans go over OTLP/HTTP (protobuf) to `msgx.telemetry.otlp-endpoint`
//! through the SDK's batch processor (its own thread and a blocking HTTP
//! client, so a slow collector never stalls the jobs); spans are dropped,
//! never queued without bound, when the collector is away.

use super::trace_context::TraceParent;
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, TracerProvider as _,
};
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::registry::LookupSpan;

/// The running exporter: flushes and stops on drop (at exit).
pub struct Export {
    provider: SdkTracerProvider,
}

impl Drop for Export {
    fn drop(&mut self) {
        if let Err(e) = self.provider.shutdown() {
            eprintln!("msgx: OTLP span export did not shut down cleanly: {e}");
        }
    }
}

/// The tracing layer that exports spans to `endpoint`, and its exporter.
pub fn layer<S>(
    endpoint: &str,
) -> Result<
    (
        tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>,
        Export,
    ),
    opentelemetry_otlp::ExporterBuildError,
>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    let exporter = SpanExporter::builder()
        .with_http()
        .with_endpoint(endpoint)
        .build()?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name("msgx").build())
        .build();
    let tracer = provider.tracer("msgx");
    Ok((
        tracing_opentelemetry::layer().with_tracer(tracer),
        Export { provider },
    ))
}

/// Makes `span` a child of the message's stored context (a remote parent:
/// the ingest span itself is not exported), so every span of a message
/// shares its trace-id in the collector.
pub fn set_parent(span: &tracing::Span, t: &TraceParent) {
    let parent = SpanContext::new(
        TraceId::from_bytes(t.trace_id()),
        SpanId::from_bytes(t.span_id()),
        TraceFlags::new(t.flags()),
        true,
        TraceState::default(),
    );
    let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(parent));
}
