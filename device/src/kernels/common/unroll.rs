//! `unroll!`: a loop over `0..N` (N ≤ 8, a constant or const generic) written out as straight-line
//! code, so that arrays indexed by the loop variable stay in registers. LLVM does not always
//! unroll loops whose bodies hold shuffles and many loads; a register array indexed by a loop
//! variable that survives goes to local memory (`ld.local`), which costs as much as a global load.

/// `unroll!(N, |i| { body })`: runs `body` with `i = 0, 1, …, N − 1` (at most 8), unrolled.
macro_rules! unroll {
    ($n:expr, |$i:ident| $body:block) => {{
        const { assert!($n <= 8, "unroll! covers at most 8 iterations") };
        unroll!(@each $n, $i, $body, 0 1 2 3 4 5 6 7)
    }};
    (@each $n:expr, $i:ident, $body:block, $($k:literal)*) => {{
        $(
            if $k < $n {
                let $i: usize = $k;
                $body
            }
        )*
    }};
}

pub(crate) use unroll;

/// `by_count!(count, [k…], max, f, (args…))`: `f::<count>(args…)` for a block-uniform `count`
/// among the literals `k…`, else `f::<max>(args…)`: one copy of a loop per count of groups, so
/// that the loop runs exactly over them with no test per group.
macro_rules! by_count {
    ($count:expr, [$($k:literal)*], $max:literal, $f:ident, $args:tt) => {
        match $count {
            $($k => $f::<$k> $args,)*
            _ => $f::<$max> $args,
        }
    };
}

pub(crate) use by_count;
