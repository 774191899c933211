//! The memory budget: every reader, generator and graph construction computes the bytes it is
//! about to allocate from declared sizes, with checked arithmetic, and asks [`Limits::check`]
//! before allocating.

use crate::error::{GraphError, Result};

/// Requests up to this size pass without looking up what the machine can give.
const SMALL: u64 = 64 << 20;

/// A memory budget for one allocation step.
///
/// [`Limits::default`] is what the machine can give now: the smaller of `MemAvailable` and the
/// address-space limit (`ulimit -v`) less what the process already maps, read from `/proc` only
/// for requests above 64 MiB (16 GiB where `/proc` is absent). [`Limits::max_bytes`] sets a fixed
/// budget (the CLI's `--max-memory`; tests and fuzzing use small ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    max_bytes: Option<u64>,
}

impl Limits {
    /// A fixed budget of `bytes`.
    pub fn max_bytes(bytes: u64) -> Limits {
        Limits { max_bytes: Some(bytes) }
    }

    /// The budget in bytes (for the machine budget, looked up now).
    pub fn budget(&self) -> u64 {
        self.max_bytes.unwrap_or_else(machine_bytes)
    }

    /// Checks that allocating `bytes` for `what` fits the budget.
    ///
    /// # Errors
    /// [`GraphError::OverBudget`] naming `what`, the bytes and the budget.
    pub fn check(&self, what: &'static str, bytes: u64) -> Result<()> {
        if self.max_bytes.is_none() && bytes <= SMALL {
            return Ok(());
        }
        let budget = self.budget();
        if bytes > budget {
            return Err(GraphError::OverBudget { what, bytes, budget });
        }
        Ok(())
    }

    /// Checks `count` items of `size` bytes each (the product checked for overflow).
    ///
    /// # Errors
    /// [`GraphError::OverBudget`] (also when the product overflows).
    pub fn check_items(&self, what: &'static str, count: u64, size: u64) -> Result<()> {
        self.check(what, count.saturating_mul(size))
    }
}

/// The sum of `count * size` terms, saturating at `u64::MAX` (which no budget admits).
pub(crate) fn bytes_of(terms: &[(u64, u64)]) -> u64 {
    terms.iter().fold(0u64, |acc, &(count, size)| acc.saturating_add(count.saturating_mul(size)))
}

/// What the machine can give now (see [`Limits`]).
fn machine_bytes() -> u64 {
    let kib = |text: &str, key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|k| k.saturating_mul(1024))
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let available = kib(&meminfo, "MemAvailable:").unwrap_or(16 << 30);
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let address_space = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|soft| soft.parse::<u64>().ok());
    match address_space {
        Some(limit) => {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let mapped = kib(&status, "VmSize:").unwrap_or(0);
            available.min(limit.saturating_sub(mapped))
        }
        None => available,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_checked_without_overflow() {
        let l = Limits::max_bytes(1000);
        assert!(l.check("x", 1000).is_ok());
        let e = l.check("x", 1001).unwrap_err();
        assert!(matches!(e, GraphError::OverBudget { what: "x", bytes: 1001, budget: 1000 }), "{e}");
        assert!(l.check_items("y", u64::MAX, 8).is_err());
        assert_eq!(bytes_of(&[(u64::MAX, 2), (1, 1)]), u64::MAX);
        assert!(Limits::default().check("small", 1 << 20).is_ok());
        assert!(Limits::default().check("huge", u64::MAX / 2).is_err());
        assert!(Limits::default().budget() > 0);
    }
}
