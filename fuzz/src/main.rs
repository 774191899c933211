//! `fuzz-graphs`: a time-bounded mutation fuzzer for dfgnn-graphs on stable Rust.
//!
//! ```text
//! fuzz-graphs <target|all> [--seconds S] [--seed N] [--corpus DIR] [--artifacts DIR] [--execs N]
//! fuzz-graphs replay <target> <file>...
//! fuzz-graphs list
//! ```
//!
//! Each target starts from its seed corpus (`fuzz/corpus/<target>/`, the files as they are),
//! then runs mutants of corpus files (bit flips, byte edits, interesting integers, truncation,
//! duplication and splicing of ranges, digits in text) for the time given. The stream of
//! mutants is a pure function of the seed and the corpus, so `--execs N` replays a run exactly
//! up to input N (for an abort, which kills the process before it can save the input). A panic
//! saves the input to `<artifacts>/<target>/crash-<hash>` and fails the run; an input running
//! longer than 10 s is saved as `hang-<hash>` and ends the process. Memory is bounded by the
//! targets' budget and, in `scripts/fuzz-ci.sh`, by `ulimit -v`.

mod targets;

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use targets::{TARGETS, Target};

/// An input running longer than this is a hang.
const HANG: Duration = Duration::from_secs(10);
/// Mutants are cut to this length.
const MAX_LEN: usize = 1 << 16;

/// SplitMix64: a small, seedable stream (the mutants must be reproducible, not random).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (0 for `n == 0`).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// Integers that sit on boundaries, as decimal text and as little-endian bytes.
const INTERESTING: [u64; 12] =
    [0, 1, 2, 255, 256, 65_535, 65_536, 2_147_483_647, 4_294_967_295, 4_294_967_296, 4_000_000_000, u64::MAX];

/// One mutant of `base` (a corpus file), possibly spliced with `other`.
fn mutate(rng: &mut Rng, base: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = base.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        let at = rng.below(len + 1);
        match rng.below(10) {
            0 if len > 0 => out[at.min(len - 1)] ^= 1 << rng.below(8),
            1 if len > 0 => out[at.min(len - 1)] = rng.next() as u8,
            2 => out.insert(at, rng.next() as u8),
            3 if len > 0 => {
                let end = (at + 1 + rng.below(16)).min(len);
                out.drain(at.min(len - 1)..end);
            }
            4 => {
                let v = INTERESTING[rng.below(INTERESTING.len())];
                let width = [1, 2, 4, 8][rng.below(4)];
                let bytes = &v.to_le_bytes()[..width];
                let at = at.min(len.saturating_sub(width));
                for (k, &b) in bytes.iter().enumerate() {
                    if at + k < out.len() {
                        out[at + k] = b;
                    } else {
                        out.push(b);
                    }
                }
            }
            5 => {
                let text = INTERESTING[rng.below(INTERESTING.len())].to_string();
                let digits = out[at..].iter().take_while(|b| b.is_ascii_digit()).count();
                out.splice(at..at + digits, text.bytes());
            }
            6 => out.truncate(at),
            7 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(64)).min(len);
                let piece = out[start..end].to_vec();
                for _ in 0..1 + rng.below(8) {
                    out.splice(at..at, piece.iter().copied());
                }
            }
            8 if !other.is_empty() => {
                let start = rng.below(other.len());
                let end = (start + 1 + rng.below(256)).min(other.len());
                out.splice(at.., other[start..end].iter().copied());
            }
            _ => out.push(b"0123456789 \n#%-.,()[]=:'x"[rng.below(25)]),
        }
    }
    out.truncate(MAX_LEN);
    out
}

/// A short content hash for artifact names (FNV-1a).
fn hash(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The seed corpus of a target: its files in name order (an empty input when there are none).
fn corpus(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    paths.sort();
    let mut files: Vec<Vec<u8>> = paths.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    if files.is_empty() {
        files.push(Vec::new());
    }
    files
}

/// Runs one input, catching a panic; returns the panic message.
fn run_one(
    target: &Target,
    input: &[u8],
    current: &Mutex<Vec<u8>>,
    started: &AtomicU64,
    clock: Instant,
) -> Option<String> {
    if let Ok(mut slot) = current.lock() {
        slot.clear();
        slot.extend_from_slice(input);
    }
    started.store(clock.elapsed().as_millis() as u64 + 1, Ordering::SeqCst);
    let result = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
    started.store(0, Ordering::SeqCst);
    result.err().map(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Saves an input under `<artifacts>/<target>/<kind>-<hash>` and returns the path.
fn save(artifacts: &Path, target: &str, kind: &str, input: &[u8]) -> PathBuf {
    let dir = artifacts.join(target);
    std::fs::create_dir_all(&dir).ok();
    let path = dir.join(format!("{kind}-{:016x}", hash(input)));
    std::fs::write(&path, input).ok();
    path
}

/// Options of a fuzzing run.
struct Run {
    seconds: f64,
    seed: u64,
    corpus: PathBuf,
    artifacts: PathBuf,
    execs: Option<u64>,
}

/// Fuzzes one target; returns the executions and the crashes found.
fn fuzz(target: &'static Target, run: &Run) -> (u64, usize) {
    let seeds = corpus(&run.corpus.join(target.name));
    let clock = Instant::now();
    let current = Arc::new(Mutex::new(Vec::new()));
    let started = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    {
        let (current, started, done, artifacts) =
            (current.clone(), started.clone(), done.clone(), run.artifacts.clone());
        std::thread::spawn(move || {
            while done.load(Ordering::SeqCst) == 0 {
                std::thread::sleep(Duration::from_millis(200));
                let since = started.load(Ordering::SeqCst);
                if since > 0 && clock.elapsed().as_millis() as u64 + 1 - since > HANG.as_millis() as u64 {
                    let input = current.lock().map(|c| c.clone()).unwrap_or_default();
                    let path = save(&artifacts, target.name, "hang", &input);
                    eprintln!("{}: HANG over {HANG:?}: input saved to {}", target.name, path.display());
                    std::process::exit(2);
                }
            }
        });
    }
    eprintln!("{}: seed {}, {} corpus files", target.name, run.seed, seeds.len());
    let mut rng = Rng(run.seed ^ hash(target.name.as_bytes()));
    let (mut execs, mut crashes) = (0u64, 0usize);
    let limit = Duration::from_secs_f64(run.seconds);
    let mut next_report = Duration::from_secs(5);
    loop {
        let input = if (execs as usize) < seeds.len() {
            seeds[execs as usize].clone()
        } else {
            let base = &seeds[rng.below(seeds.len())];
            let other = &seeds[rng.below(seeds.len())];
            mutate(&mut rng, base, other)
        };
        if run.execs.is_some_and(|n| execs >= n) || (run.execs.is_none() && clock.elapsed() >= limit) {
            break;
        }
        if let Some(message) = run_one(target, &input, &current, &started, clock) {
            crashes += 1;
            let path = save(&run.artifacts, target.name, "crash", &input);
            eprintln!("{}: CRASH at input {execs}: {message}\n  saved to {}", target.name, path.display());
        }
        execs += 1;
        if clock.elapsed() >= next_report {
            eprintln!("{}: {execs} inputs in {:.0} s (seed {})", target.name, clock.elapsed().as_secs_f64(), run.seed);
            next_report += Duration::from_secs(5);
        }
    }
    done.store(1, Ordering::SeqCst);
    (execs, crashes)
}

fn usage() -> ! {
    let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
    eprintln!(
        "usage: fuzz-graphs <target|all> [--seconds S] [--seed N] [--corpus DIR] [--artifacts DIR] [--execs N]\n       \
         fuzz-graphs replay <target> <file>...\n       fuzz-graphs list\ntargets: {}",
        names.join(", ")
    );
    std::process::exit(2);
}

fn find(name: &str) -> &'static Target {
    TARGETS.iter().find(|t| t.name == name).unwrap_or_else(|| usage())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(first) = args.first() else { usage() };
    // Panics are reported with their input; the default hook's message would repeat them.
    panic::set_hook(Box::new(|_| {}));
    if first == "list" {
        for target in TARGETS {
            println!("{}", target.name);
        }
        return;
    }
    if first == "replay" {
        let target = find(args.get(1).map_or("", String::as_str));
        let mut failed = false;
        for file in &args[2..] {
            let input = std::fs::read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
            let (current, started) = (Mutex::new(Vec::new()), AtomicU64::new(0));
            match run_one(target, &input, &current, &started, Instant::now()) {
                Some(message) => {
                    failed = true;
                    eprintln!("{file}: CRASH: {message}");
                }
                None => eprintln!("{file}: ok"),
            }
        }
        std::process::exit(i32::from(failed));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut run = Run {
        seconds: 10.0,
        seed: 1,
        corpus: root.join("corpus"),
        artifacts: std::env::temp_dir().join("dfgnn-fuzz-artifacts"),
        execs: None,
    };
    let mut k = 1;
    while k < args.len() {
        let value = args.get(k + 1).cloned().unwrap_or_else(|| usage());
        match args[k].as_str() {
            "--seconds" => run.seconds = value.parse().unwrap_or_else(|_| usage()),
            "--seed" => run.seed = value.parse().unwrap_or_else(|_| usage()),
            "--corpus" => run.corpus = PathBuf::from(value),
            "--artifacts" => run.artifacts = PathBuf::from(value),
            "--execs" => run.execs = Some(value.parse().unwrap_or_else(|_| usage())),
            _ => usage(),
        }
        k += 2;
    }
    let chosen: Vec<&'static Target> = if first == "all" { TARGETS.iter().collect() } else { vec![find(first)] };
    let mut total_crashes = 0;
    for target in chosen {
        let (execs, crashes) = fuzz(target, &run);
        println!("{}: {execs} inputs, {crashes} crashes", target.name);
        total_crashes += crashes;
    }
    std::process::exit(i32::from(total_crashes > 0));
}
