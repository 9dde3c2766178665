//! Decode throughput (issue 3, item 9): a SCHD of 1,000 FLTR and a FLOP mix,
//! each beside quick-xml's raw event tokenization of the same bytes (the
//! ceiling). Target: decode ≥ 50% of the raw rate. Figures go to
//! docs/BENCHMARKS.md.
//!
//! Inputs are generated here from msgx's own composed samples, never from
//! ../shared.
//!
//! Run: `cargo bench --bench codec` (divan; add `-- --sample-count 10` for a
//! short run). Each row prints its median time and bytes per second.

use std::sync::LazyLock;

use divan::counter::BytesCount;
use divan::{Bencher, black_box};

/// msgx's production allocator (see `msgx::Allocator`).
#[global_allocator]
static ALLOCATOR: msgx::Allocator = msgx::Allocator;

#[path = "support/codec_inputs.rs"]
mod inputs;
use inputs::{flop_mix, schd_1000, tokenize};

static SCHD: LazyLock<String> = LazyLock::new(|| {
    let schd = schd_1000();
    assert!(
        msgx::codec::decode(schd.as_bytes()).is_ok(),
        "generated SCHD must decode"
    );
    schd
});

static MIX: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mix = flop_mix();
    for m in &mix {
        assert!(
            msgx::codec::decode(m.as_bytes()).is_ok(),
            "FLOP sample must decode"
        );
    }
    mix
});

fn mix_bytes() -> usize {
    MIX.iter().map(|m| m.len()).sum()
}

#[divan::bench_group(sample_count = 30)]
mod schd_1000_fltr {
    use super::*;

    #[divan::bench]
    fn decode(b: Bencher) {
        b.counter(BytesCount::new(SCHD.len()))
            .bench(|| msgx::codec::decode(black_box(SCHD.as_bytes())).is_ok());
    }

    #[divan::bench]
    fn quick_xml_tokenize(b: Bencher) {
        b.counter(BytesCount::new(SCHD.len()))
            .bench(|| tokenize(black_box(&SCHD)));
    }
}

#[divan::bench_group(sample_count = 30)]
mod flop_mix {
    use super::*;

    #[divan::bench]
    fn decode(b: Bencher) {
        b.counter(BytesCount::new(mix_bytes())).bench(|| {
            for m in MIX.iter() {
                let _ = black_box(msgx::codec::decode(black_box(m.as_bytes())));
            }
        });
    }

    #[divan::bench]
    fn quick_xml_tokenize(b: Bencher) {
        b.counter(BytesCount::new(mix_bytes()))
            .bench(|| MIX.iter().map(|m| tokenize(black_box(m))).sum::<usize>());
    }
}

fn main() {
    divan::main();
}
