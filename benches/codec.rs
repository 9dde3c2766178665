//! Decode throughput (issue 3, item 9): a SCHD of 1,000 FLTR and a FLOP mix,
//! each beside quick-xml's raw event tokenization of the same bytes (the
//! ceiling). Target: decode ≥ 50% of the raw rate. Figures go to
//! docs/BENCHMARKS.md.
//!
//! Inputs are generated here from msgx's own composed samples, never from
//! ../shared.
//!
//! Run: `cargo bench --bench codec` (add `-- --quick` for a short run).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// msgx's production allocator (see `msgx::Allocator`).
#[global_allocator]
static ALLOCATOR: msgx::Allocator = msgx::Allocator;

#[path = "support/codec_inputs.rs"]
mod inputs;
use inputs::{flop_mix, schd_1000, tokenize};

fn bench(c: &mut Criterion) {
    let schd = schd_1000();
    assert!(
        msgx::codec::decode(schd.as_bytes()).is_ok(),
        "generated SCHD must decode"
    );
    let mut g = c.benchmark_group("schd_1000_fltr");
    g.throughput(Throughput::Bytes(schd.len() as u64));
    g.bench_function("decode", |b| {
        b.iter(|| msgx::codec::decode(black_box(schd.as_bytes())))
    });
    g.bench_function("quick_xml_tokenize", |b| {
        b.iter(|| tokenize(black_box(&schd)))
    });
    g.finish();

    let mix = flop_mix();
    for m in &mix {
        assert!(
            msgx::codec::decode(m.as_bytes()).is_ok(),
            "FLOP sample must decode"
        );
    }
    let total: usize = mix.iter().map(|m| m.len()).sum();
    let mut g = c.benchmark_group("flop_mix");
    g.throughput(Throughput::Bytes(total as u64));
    g.bench_function("decode", |b| {
        b.iter(|| {
            for m in &mix {
                let _ = black_box(msgx::codec::decode(black_box(m.as_bytes())));
            }
        })
    });
    g.bench_function("quick_xml_tokenize", |b| {
        b.iter(|| mix.iter().map(|m| tokenize(black_box(m))).sum::<usize>())
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(30);
    targets = bench
}
criterion_main!(benches);
