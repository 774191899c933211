//! A model's **variant table**: one declaration generates the entry points of every compiled
//! configuration of the fused passes and the `VARIANTS` table the host planner reads.
//!
//! A variant is a load width (`f32`, or `F4` when `F % 4 == 0`), a number of vectors per lane
//! (`SLOTS`) and edges per step and team (`STEP`). A model supplies four entry bodies generic
//! over `<V, SLOTS, STEP>` (forward, `row_group` forward, backward rows, backward columns, each
//! taking its parameter struct) and lists its variants; see [`crate::kernels::gt`].

use crate::simt::KernelRef;

/// The backward entries of a variant.
#[derive(Debug)]
pub struct Backward<R: 'static, C: 'static> {
    /// Edges per step and team.
    pub step: u32,
    /// The row pass.
    pub rows: KernelRef<R>,
    /// The column pass.
    pub cols: KernelRef<C>,
}

impl<R, C> Clone for Backward<R, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R, C> Copy for Backward<R, C> {}
impl<R, C> PartialEq for Backward<R, C> {
    fn eq(&self, other: &Self) -> bool {
        (self.step, self.rows, self.cols) == (other.step, other.rows, other.cols)
    }
}
impl<R, C> Eq for Backward<R, C> {}

/// The packed entries of a variant: the same passes over packed units, a row per team (see
/// [`crate::abi::Units`]).
#[derive(Debug)]
pub struct Packed<F: 'static, R: 'static, C: 'static> {
    /// The forward.
    pub forward: KernelRef<F>,
    /// The backward's row pass.
    pub rows: KernelRef<R>,
    /// The backward's column pass.
    pub cols: KernelRef<C>,
}

impl<F, R, C> Clone for Packed<F, R, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F, R, C> Copy for Packed<F, R, C> {}
impl<F, R, C> PartialEq for Packed<F, R, C> {
    fn eq(&self, other: &Self) -> bool {
        (self.forward, self.rows, self.cols) == (other.forward, other.rows, other.cols)
    }
}
impl<F, R, C> Eq for Packed<F, R, C> {}

/// One compiled configuration of a model's fused kernels, with parameter structs `F` (forward),
/// `G` (`row_group`), `R` (backward rows) and `C` (backward columns).
#[derive(Debug)]
pub struct Variant<F: 'static, G: 'static, R: 'static, C: 'static> {
    /// Features per load: 1 or 4.
    pub width: u32,
    /// Register slots (vectors) per lane.
    pub slots: u32,
    /// Edges per step and team of the forward.
    pub forward_step: u32,
    /// The forward.
    pub forward: KernelRef<F>,
    /// The `row_group` forward.
    pub group: KernelRef<G>,
    /// The backward passes, where they exist.
    pub backward: Option<Backward<R, C>>,
    /// The packed entries, where they exist (one-slot variants: only their lane maps can have
    /// several teams).
    pub packed: Option<Packed<F, R, C>>,
}

impl<F, G, R, C> Clone for Variant<F, G, R, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F, G, R, C> Copy for Variant<F, G, R, C> {}
impl<F, G, R, C> PartialEq for Variant<F, G, R, C> {
    fn eq(&self, other: &Self) -> bool {
        (self.width, self.slots, self.forward_step, self.forward, self.group, self.backward, self.packed)
            == (other.width, other.slots, other.forward_step, other.forward, other.group, other.backward, other.packed)
    }
}
impl<F, G, R, C> Eq for Variant<F, G, R, C> {}

/// Declares a model's variants once: each line generates its entry points and its row of
/// `VARIANTS`, a `&[Variant<..>]` of the four parameter types. The header names the model (for
/// the entries' docs), the parameter types and the generic entry bodies (the forward and
/// backward ones with a last `const PACKED: bool`); a line reads `vector type, width, slots:
/// forward step (forward entry, group entry) [, backward step (row-pass entry, column-pass
/// entry) [, packed (forward, row-pass, column-pass entries)]]`.
macro_rules! variants {
    (
        model $model:literal;
        params ($fp:ty, $gp:ty, $rp:ty, $cp:ty);
        bodies ($fb:ident, $gb:ident, $rb:ident, $cb:ident);
        $(
            $v:ty, $width:literal, $slots:literal:
            forward $fstep:literal ($fconst:ident $fwd:ident, $gconst:ident $grp:ident)
            $(, backward $bstep:literal ($rconst:ident $rows:ident, $cconst:ident $cols:ident)
                $(, packed ($pfconst:ident $pfwd:ident, $prconst:ident $prows:ident, $pcconst:ident $pcols:ident))?
            )?;
        )*
    ) => {
        $(
            $crate::kernel! {
                #[doc = concat!($model, " forward, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                pub kernel $fconst = fn $fwd(p: &$fp) {
                    $fb::<$v, $slots, $fstep, false>(p)
                }
            }
            $crate::kernel! {
                #[doc = concat!($model, " `row_group` forward, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                pub kernel $gconst = fn $grp(p: &$gp) {
                    $gb::<$v, $slots, $fstep>(p)
                }
            }
            $(
                $crate::kernel! {
                    #[doc = concat!($model, " backward row pass, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                    pub kernel $rconst = fn $rows(p: &$rp) {
                        $rb::<$v, $slots, $bstep, false>(p)
                    }
                }
                $crate::kernel! {
                    #[doc = concat!($model, " backward column pass, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                    pub kernel $cconst = fn $cols(p: &$cp) {
                        $cb::<$v, $slots, $bstep, false>(p)
                    }
                }
                $(
                    $crate::kernel! {
                        #[doc = concat!($model, " packed forward, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                        pub kernel $pfconst = fn $pfwd(p: &$fp) {
                            $fb::<$v, $slots, $fstep, true>(p)
                        }
                    }
                    $crate::kernel! {
                        #[doc = concat!($model, " packed backward row pass, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                        pub kernel $prconst = fn $prows(p: &$rp) {
                            $rb::<$v, $slots, $bstep, true>(p)
                        }
                    }
                    $crate::kernel! {
                        #[doc = concat!($model, " packed backward column pass, ", stringify!($v), " loads, ", stringify!($slots), " slots.")]
                        pub kernel $pcconst = fn $pcols(p: &$cp) {
                            $cb::<$v, $slots, $bstep, true>(p)
                        }
                    }
                )?
            )?
        )*

        /// Every variant, one per (width, slots).
        pub const VARIANTS: &[$crate::kernels::attention::variants::Variant<$fp, $gp, $rp, $cp>] = &[$(
            $crate::kernels::attention::variants::Variant {
                width: $width,
                slots: $slots,
                forward_step: $fstep,
                forward: $fconst,
                group: $gconst,
                backward: $crate::kernels::attention::variants::variants!(@backward $($bstep, $rconst, $cconst)?),
                packed: $crate::kernels::attention::variants::variants!(@packed $($($pfconst, $prconst, $pcconst)?)?),
            },
        )*];
    };
    (@backward) => { None };
    (@backward $bstep:literal, $rconst:ident, $cconst:ident) => {
        Some($crate::kernels::attention::variants::Backward { step: $bstep, rows: $rconst, cols: $cconst })
    };
    (@packed) => { None };
    (@packed $pfconst:ident, $prconst:ident, $pcconst:ident) => {
        Some($crate::kernels::attention::variants::Packed { forward: $pfconst, rows: $prconst, cols: $pcconst })
    };
}

pub(crate) use variants;
