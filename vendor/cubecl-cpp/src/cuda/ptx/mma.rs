use crate::{
    Dialect,
    shared::{Component, Elem, FP4Kind, FP6Kind, FP8Kind, Variable},
};

#[allow(clippy::too_many_arguments)]
pub fn mma_template<D: Dialect>(
    a_elem: Elem<D>,
    b_elem: Elem<D>,
    cd_elem: Elem<D>,
    k: u32,
    n_a_registers: usize,
    n_b_registers: usize,
    n_c_registers: usize,
    n_d_registers: usize,
) -> String {
    let a_ty = mma_ty(a_elem);
    let b_ty = mma_ty(b_elem);
    let cd_ty = mma_ty(cd_elem);

    let ab_arg_ty = match a_elem {
        Elem::F32 => &format!("{}", Elem::<D>::F32),
        _ => &format!("{}", Elem::<D>::U32),
    };
    let cd_arg_ty = match cd_elem {
        Elem::F32 => &format!("{}", Elem::<D>::F32),
        _ => &format!("{}", Elem::<D>::U32),
    };

    let args_a = (0..n_a_registers).map(|i| format!("{ab_arg_ty} const &reg_a_{i}"));
    let args_b = (0..n_b_registers).map(|i| format!("{ab_arg_ty} const &reg_b_{i}"));
    let args_c = (0..n_c_registers).map(|i| format!("{cd_arg_ty} const &reg_c_{i}"));
    let args_d = (0..n_d_registers).map(|i| format!("{cd_arg_ty} &reg_d_{i}"));
    let args = args_a
        .chain(args_b)
        .chain(args_c)
        .chain(args_d)
        .collect::<Vec<_>>()
        .join(", ");

    let kind = if is_fp6_fp4(a_elem) || is_fp6_fp4(b_elem) {
        ".kind::f8f6f4"
    } else {
        ""
    };

    let mut idx = 0usize;

    let placeholders_d = comma_separated((0..n_d_registers).map(|_| placeholder(&mut idx)));
    let placeholders_d = format!("{{{placeholders_d}}}");

    let placeholders_a = comma_separated((0..n_a_registers).map(|_| placeholder(&mut idx)));
    let placeholders_a = format!("{{{placeholders_a}}}");

    let placeholders_b = comma_separated((0..n_b_registers).map(|_| placeholder(&mut idx)));
    let placeholders_b = format!("{{{placeholders_b}}}");

    let placeholders_c = comma_separated((0..n_c_registers).map(|_| placeholder(&mut idx)));
    let placeholders_c = format!("{{{placeholders_c}}}");

    let params_out =
        comma_separated((0..n_d_registers).map(|i| as_reg(&format!("reg_d_{i}"), cd_elem, true)));
    let params_a = (0..n_a_registers).map(|i| as_reg(&format!("reg_a_{i}"), a_elem, false));
    let params_b = (0..n_b_registers).map(|i| as_reg(&format!("reg_b_{i}"), b_elem, false));
    let params_c = (0..n_c_registers).map(|i| as_reg(&format!("reg_c_{i}"), cd_elem, false));
    let params_in = comma_separated(params_a.chain(params_b).chain(params_c));

    format!(
        r#"
inline __device__ void
__mma_m16n8k{k}_{a_elem}_{b_elem}_{cd_elem}({args}) {{
  asm volatile("mma.sync.aligned.m16n8k{k}.row.col{kind}.{cd_ty}.{a_ty}.{b_ty}.{cd_ty}"
               " {placeholders_d}, {placeholders_a}, {placeholders_b}, {placeholders_c};"
               : {params_out}
               : {params_in});
    }}
    "#
    )
}

/// flint patch: the helper behind a manual MMA of shape `m = 64`, which this fork compiles to
/// Hopper's warpgroup MMA (`wgmma.mma_async`, sm_90a), B in shared memory and A in
/// registers or, when `a_desc`, in shared memory too (the SS form, both operands K-major).
/// `k / 16` steps run back to back: step `s` reads A registers `4s..4s + 4` (or A's
/// descriptor advanced by its third word, in 16-byte units) and B's descriptor advanced by
/// `b_2`. A descriptor is three words: its low and high halves and that step. B's element
/// type says how B is stored (u16: MN-major, `imm-trans-b`; otherwise K-major), so that each
/// form has a helper of its own.
///
/// The call only issues: a proxy fence (the operands were written through the generic
/// proxy, `wgmma` reads them through the async one) unless `k % 4 >= 2` (operands written
/// by the async proxy alone, as TMA copies are), then one asm statement with
/// `wgmma.fence`, the steps and a commit. The accumulators are the asm's in-out operands,
/// so the compiler sees them written here; `wgmma_wait_call` is where they are ready.
///
/// An odd `k` (`k % 2 == 1`, no product's) asks for a product that starts from zero: the
/// first step's `scale-d` is false and the accumulators are outputs only, so the compiler
/// needs no zeros in them (ptxas otherwise can give those zeros a register of another
/// product in flight and wait for it).
pub fn wgmma_template<D: Dialect>(
    a_elem: Elem<D>,
    n: u32,
    k: u32,
    mn_major: bool,
    a_desc: bool,
) -> String {
    let ab = mma_ty(a_elem);
    let steps = (k / 16) as usize;
    let acc = (n / 2) as usize;
    let trans = u32::from(mn_major);
    let suffix = match (a_desc, mn_major) {
        (true, _) => "_ss",
        (false, true) => "_mn",
        (false, false) => "",
    };
    let a_words = if a_desc { 3 } else { 4 * steps };
    let args_a = (0..a_words).map(|i| format!("uint32 const &a_{i}"));
    let args_b = (0..3).map(|i| format!("uint32 const &b_{i}"));
    let args_c = (0..acc).map(|i| format!("float const &c_{i}"));
    let args_d = (0..acc).map(|i| format!("float &d_{i}"));
    let args = args_a
        .chain(args_b)
        .chain(args_c)
        .chain(args_d)
        .collect::<Vec<_>>()
        .join(", ");
    let zero = k % 2 == 1;
    // flint patch: `k % 4 >= 2` (no product's) drops the proxy fence: a `MEMBAR` and a
    // `FENCE.VIEW.ASYNC` before every issue, which only generic-proxy writes need.
    let fence = if k % 4 >= 2 {
        ""
    } else {
        "  asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
    };
    let copies: String = if zero {
        String::new()
    } else {
        (0..acc).map(|i| format!("  d_{i} = c_{i};\n")).collect()
    };
    // One asm statement for the fence, every step and the commit: the compiler moves
    // operands into place before an asm statement, and a move between the fence and a step
    // (an A fragment sharing registers with another product's) is a modification `wgmma`
    // does not see (measured: wrong products when both of a kernel's products had one shape).
    let regs_d = comma_separated((0..acc).map(|i| format!("%{i}")));
    let a0 = acc;
    let (a_ops, desc0) = if a_desc {
        (steps, acc + steps)
    } else {
        (4 * steps, acc + 4 * steps)
    };
    let scale = desc0 + steps;
    let mut text = format!(
        "\"{{ .reg .pred p, q; setp.ne.b32 p, %{scale}, 0; setp.eq.b32 q, %{scale}, %{scale}; wgmma.fence.sync.aligned; \"\n"
    );
    for s in 0..steps {
        let (a, tail) = if a_desc {
            (format!("%{}", a0 + s), "0, 0".to_string())
        } else {
            let regs_a = comma_separated((0..4).map(|j| format!("%{}", a0 + 4 * s + j)));
            (format!("{{{regs_a}}}"), format!("{trans}"))
        };
        text.push_str(&format!(
            "      \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ab}.{ab} {{{regs_d}}}, {a}, %{}, {}, 1, 1, {tail}; \"\n",
            desc0 + s,
            if s == 0 { "p" } else { "q" }
        ));
    }
    text.push_str("      \"wgmma.commit_group.sync.aligned; }\"");
    let out = if zero { "=f" } else { "+f" };
    let outs = comma_separated((0..acc).map(|i| format!(r#""{out}"(d_{i})"#)));
    let a_ins: Vec<String> = if a_desc {
        (0..a_ops)
            .map(|s| format!(r#""l"(adesc + {s}ull * a_2)"#))
            .collect()
    } else {
        (0..a_ops).map(|i| format!(r#""r"(a_{i})"#)).collect()
    };
    let ins = comma_separated(
        a_ins
            .into_iter()
            .chain((0..steps).map(|s| format!(r#""l"(desc + {s}ull * b_2)"#)))
            .chain([format!(r#""r"({})"#, u32::from(!zero))]),
    );
    let adesc = if a_desc {
        "  const uint64 adesc = (static_cast<uint64>(a_1) << 32) | static_cast<uint64>(a_0);\n"
    } else {
        ""
    };
    format!(
        r#"
__forceinline__ __device__ void
__wgmma_m64n{n}k{k}_{a_elem}_f32{suffix}({args}) {{
{copies}{adesc}  const uint64 desc = (static_cast<uint64>(b_1) << 32) | static_cast<uint64>(b_0);
{fence}  asm volatile({text}
               : {outs}
               : {ins}
               : "memory");
}}
"#
    )
}

/// flint patch: the wait for warpgroup MMAs, asked for by a three-matrix `stmatrix` (no
/// `stmatrix` stores three) of the accumulators that must be ready: `wgmma.wait_group` with
/// at most one group left in flight when `transpose`, none otherwise. The accumulators are
/// its in-out operands, so that no read of them moves above the wait (the operand fence).
pub fn wgmma_wait_call<D: Dialect>(registers: &Variable<D>, transpose: bool) -> String {
    let floats = match registers {
        Variable::LocalArray(_, item, size) => size * item.vectorization,
        _ => 0,
    };
    let ops = comma_separated(
        (0..floats).map(|i| format!(r#""+f"(reinterpret_cast<float*>({registers})[{i}])"#)),
    );
    let depth = u32::from(transpose);
    format!("asm volatile(\"wgmma.wait_group.sync.aligned {depth};\" : {ops} :: \"memory\");\n")
}

/// flint patch: a scheduling fence, asked for by a five-matrix `stmatrix` (no `stmatrix`
/// stores five): a shared-memory store of the registers' 32-bit words that never runs (its
/// predicate compares `%smid` with a value no SM has). ptxas keeps stores on their side of a
/// `wgmma.wait_group`, and otherwise schedules the wait as early as it may; so the
/// instructions computing the registers stay ahead of the wait that follows, overlapping the
/// products still in flight.
pub fn order_fence_call<D: Dialect>(
    registers: &Variable<D>,
    buffer: &str,
    offset: &Variable<D>,
) -> String {
    let words = match registers {
        Variable::LocalArray(_, item, size) => size * item.vectorization * item.elem.size() / 4,
        _ => 0,
    };
    // Four words a store where they come in fours: ptxas branches around a run of stores
    // once, but around each single store of a long run.
    let stores: String = (0..words.div_ceil(4))
        .map(|g| {
            let regs: Vec<String> = (4 * g + 1..=(4 * g + 4).min(words))
                .map(|i| format!("%{i}"))
                .collect();
            match regs.len() {
                4 => format!(" @p st.shared.v4.b32 [%0], {{{}}};", regs.join(", ")),
                2 => format!(" @p st.shared.v2.b32 [%0], {{{}}};", regs.join(", ")),
                _ => regs
                    .iter()
                    .map(|r| format!(" @p st.shared.b32 [%0], {r};"))
                    .collect(),
            }
        })
        .collect();
    let ops = comma_separated(
        (0..words).map(|i| format!(r#""r"(reinterpret_cast<uint32*>({registers})[{i}])"#)),
    );
    format!(
        "asm volatile(\"{{ .reg .pred p; .reg .u32 t; mov.u32 t, %%smid; setp.eq.u32 p, t, 0xffff;{stores} }}\" :: \"r\"(static_cast<uint32>(__cvta_generic_to_shared({buffer} + {offset}))), {ops} : \"memory\");\n"
    )
}

fn is_fp6_fp4<D: Dialect>(elem: Elem<D>) -> bool {
    matches!(elem, Elem::<D>::FP4(_) | Elem::<D>::FP6(_))
}

#[allow(clippy::too_many_arguments)]
pub fn mma_scaled_template<D: Dialect>(
    a_elem: Elem<D>,
    b_elem: Elem<D>,
    cd_elem: Elem<D>,
    k: u32,
    n_a_registers: usize,
    n_b_registers: usize,
    n_c_registers: usize,
    n_d_registers: usize,
    scales_elem: Elem<D>,
    scales_factor: u32,
) -> String {
    let a_ty = mma_ty(a_elem);
    let b_ty = mma_ty(b_elem);
    let cd_ty = mma_ty(cd_elem);
    // Needs custom mapping because of the ignored sign bit
    let s_ty = match scales_elem {
        Elem::FP8(FP8Kind::UE8M0) => "ue8m0",
        Elem::FP8(FP8Kind::E4M3) => "ue4m3",
        _ => panic!("Unsupported scales type"),
    };

    let kind = match scales_factor {
        1 => "mxf8f6f4",
        2 | 4 => "mxf4nvf4",
        _ => panic!("Unsupported scales factor"),
    };

    let ab_arg_ty = match a_elem {
        Elem::F32 => &format!("{}", Elem::<D>::F32),
        _ => &format!("{}", Elem::<D>::U32),
    };
    let cd_arg_ty = match cd_elem {
        Elem::F32 => &format!("{}", Elem::<D>::F32),
        _ => &format!("{}", Elem::<D>::U32),
    };

    // Note: Scaled MMA actually requires float registers for C/D, unlike normal MMA
    let args_a = (0..n_a_registers).map(|i| format!("{ab_arg_ty} const &reg_a_{i}"));
    let args_b = (0..n_b_registers).map(|i| format!("{ab_arg_ty} const &reg_b_{i}"));
    let args_c = (0..n_c_registers).map(|i| format!("{cd_arg_ty} const &reg_c_{i}"));
    let args_d = (0..n_d_registers).map(|i| format!("{cd_arg_ty} &reg_d_{i}"));
    let args = args_a
        .chain(args_b)
        .chain(args_c)
        .chain(args_d)
        .collect::<Vec<_>>()
        .join(", ");

    let mut idx = 0usize;

    let placeholders_d = comma_separated((0..n_d_registers).map(|_| placeholder(&mut idx)));
    let placeholders_d = format!("{{{placeholders_d}}}");

    let placeholders_a = comma_separated((0..n_a_registers).map(|_| placeholder(&mut idx)));
    let placeholders_a = format!("{{{placeholders_a}}}");

    let placeholders_b = comma_separated((0..n_b_registers).map(|_| placeholder(&mut idx)));
    let placeholders_b = format!("{{{placeholders_b}}}");

    let placeholders_c = comma_separated((0..n_c_registers).map(|_| placeholder(&mut idx)));
    let placeholders_c = format!("{{{placeholders_c}}}");

    let placeholder_scales_a = format!(
        "{{{}}}, {{{}, {}}}",
        placeholder(&mut idx),
        placeholder(&mut idx),
        placeholder(&mut idx)
    );
    let placeholder_scales_b = format!(
        "{{{}}}, {{{}, {}}}",
        placeholder(&mut idx),
        placeholder(&mut idx),
        placeholder(&mut idx)
    );

    let params_out =
        comma_separated((0..n_d_registers).map(|i| as_reg(&format!("reg_d_{i}"), cd_elem, true)));
    let params_a = (0..n_a_registers).map(|i| as_reg(&format!("reg_a_{i}"), a_elem, false));
    let params_b = (0..n_b_registers).map(|i| as_reg(&format!("reg_b_{i}"), b_elem, false));
    let params_c = (0..n_c_registers).map(|i| as_reg(&format!("reg_c_{i}"), cd_elem, false));
    let params_in = comma_separated(params_a.chain(params_b).chain(params_c));

    format!(
        r#"
inline __device__ void
__mma_scaled_{scales_factor}x_m16n8k{k}_{a_elem}_{b_elem}_{cd_elem}({args}, uint32 const &scales_a, uint32 const &scales_b) {{
    static constexpr uint16 tidA = 0;
    static constexpr uint16 bidA = 0;
    static constexpr uint16 tidB = 0;
    static constexpr uint16 bidB = 0;

    asm volatile("mma.sync.aligned.kind::{kind}.block_scale.scale_vec::{scales_factor}X.m16n8k{k}.row.col.{cd_ty}.{a_ty}.{b_ty}.{cd_ty}.{s_ty} "
               "{placeholders_d}, {placeholders_a}, {placeholders_b}, {placeholders_c}, {placeholder_scales_a}, {placeholder_scales_b};"
               : {params_out}
               : {params_in}, "r"(scales_a), "h"(bidA), "h"(tidA), "r"(scales_b), "h"(bidB), "h"(tidB));
    }}
    "#
    )
}

pub(crate) fn comma_separated(it: impl IntoIterator<Item = String>) -> String {
    it.into_iter().collect::<Vec<_>>().join(", ")
}

fn placeholder(idx: &mut usize) -> String {
    let placeholder = format!("%{idx}");
    *idx += 1;
    placeholder
}

fn as_reg<D: Dialect>(ident: &str, ty: Elem<D>, output: bool) -> String {
    let ty = match ty {
        Elem::F32 => "f",
        Elem::F64 => "d",
        Elem::U64 => "l",
        _ => "r",
    };
    if output {
        format!(r#""={ty}"({ident})"#)
    } else {
        format!(r#""{ty}"({ident})"#)
    }
}

fn mma_ty<D: Dialect>(elem: Elem<D>) -> &'static str {
    match elem {
        Elem::TF32 => "tf32",
        Elem::F32 => "f32",
        Elem::F64 => "f64",
        Elem::F16 => "f16",
        Elem::BF16 => "bf16",
        Elem::FP4(FP4Kind::E2M1) => "e2m1",
        // For packed MMA this will always exist as fp4x2, since 4-bit values can't exist
        Elem::FP4x2(FP4Kind::E2M1) => "e2m1",
        Elem::FP6(FP6Kind::E2M3) => "e2m3",
        Elem::FP6(FP6Kind::E3M2) => "e3m2",
        Elem::FP8(FP8Kind::E4M3) => "e4m3",
        Elem::FP8(FP8Kind::E5M2) => "e5m2",
        Elem::FP8(FP8Kind::UE8M0) => "ue8m0",
        Elem::I8 => "s8",
        Elem::I16 => "s16",
        Elem::I32 => "s32",
        Elem::I64 => "s64",
        Elem::U8 => "u8",
        Elem::U16 => "u16",
        Elem::U32 => "u32",
        Elem::U64 => "u64",
        Elem::Bool => "b1",
        other => panic!("{other} not supported for MMA"),
    }
}

pub fn ldmatrix_call<D: Dialect>(
    output: &Variable<D>,
    buffer: &Variable<D>,
    offset: &Variable<D>,
    vector_size: &Option<usize>,
    factor: &u32,
    transpose: &bool,
) -> String {
    let elem = output.elem();
    let width = 16 / output.elem().size();
    let is_transposed = if *transpose { "_trans" } else { "" };
    let regs =
        comma_separated((0..*factor).map(|i| format!("reinterpret_cast<uint32&>({output}[{i}])")));
    let buffer = if let Some(vector_size) = *vector_size {
        let mut item = buffer.item();
        item.vectorization = vector_size;
        format!("reinterpret_cast<{item}*>({})", buffer.fmt_ptr())
    } else {
        buffer.fmt_ptr()
    };

    // flint patch: three "matrices" (no `ldmatrix` loads three) ask for the 32-bit
    // shared-memory address of the slice's start instead, in the first register: the base of
    // a warpgroup MMA's shared-memory descriptor.
    if *factor == 3 {
        return format!(
            "reinterpret_cast<uint32&>({output}[0]) = static_cast<uint32>(__cvta_generic_to_shared({buffer} + {offset}));\n"
        );
    }
    format!("__ldmatrix_m{width}n8_{elem}_{factor}x{is_transposed}({regs}, {buffer} + {offset});\n")
}

pub fn ldmatrix_template<D: Dialect>(elem: Elem<D>, factor: u32, transpose: bool) -> String {
    let width = 16 / elem.size();
    let arg_ty = Elem::<D>::U32;

    let args_regs = (0..factor).map(|i| format!("{arg_ty} &reg_{i}"));
    let arg_addr = ["void const *row_addr".to_string()];
    let args = args_regs.chain(arg_addr).collect::<Vec<_>>().join(", ");

    let mut idx = 0usize;

    let placeholders_regs = comma_separated((0..factor).map(|_| placeholder(&mut idx)));
    let placeholders_regs = format!("{{{placeholders_regs}}}");

    let placeholder_addr = format!("[{}]", placeholder(&mut idx));

    let params_regs = comma_separated((0..factor).map(|i| format!(r#""=r"(reg_{i})"#)));
    let param_addr = r#""r"(addr)"#;

    let is_transposed = if transpose { "_trans" } else { "" };
    let transposed_arg = if transpose { ".trans" } else { "" };
    let num = format!("x{factor}");

    let ty = match elem.size() {
        2 => "b16",
        1 => "b8",
        _ => unreachable!(),
    };

    format!(
        r#"
inline __device__ void
__ldmatrix_m{width}n8_{elem}_{factor}x{is_transposed}({args}) {{
  uint32 addr = static_cast<uint32>(__cvta_generic_to_shared(row_addr));
  asm volatile("ldmatrix.sync.aligned.m8n{width}.{num}{transposed_arg}.shared::cta.{ty}"
               " {placeholders_regs}, {placeholder_addr};"
               : {params_regs}
               : {param_addr});
    }}
    "#
    )
}

pub fn stmatrix_call<D: Dialect>(
    registers: &Variable<D>,
    buffer: &Variable<D>,
    offset: &Variable<D>,
    vector_size: &Option<usize>,
    factor: &u32,
    transpose: &bool,
) -> String {
    let elem = registers.elem();
    let width = 16 / registers.elem().size();
    let is_transposed = if *transpose { "_trans" } else { "" };
    let regs = comma_separated(
        (0..*factor).map(|i| format!("reinterpret_cast<uint32&>({registers}[{i}])")),
    );
    let buffer = if let Some(vector_size) = *vector_size {
        let mut item = buffer.item();
        item.vectorization = vector_size;
        format!("reinterpret_cast<{item}*>({})", buffer.fmt_ptr())
    } else {
        buffer.fmt_ptr()
    };

    // flint patch: three "matrices" (no `stmatrix` stores three) are a warpgroup MMA wait,
    // five a scheduling fence before one.
    if *factor == 3 {
        return wgmma_wait_call(registers, *transpose);
    }
    if *factor == 5 {
        return order_fence_call(registers, &buffer, offset);
    }
    format!("__stmatrix_m{width}n8_{elem}_{factor}x{is_transposed}({regs}, {buffer} + {offset});\n")
}

pub fn stmatrix_template<D: Dialect>(elem: Elem<D>, factor: u32, transpose: bool) -> String {
    let width = 16 / elem.size();
    let arg_ty = Elem::<D>::U32;

    let args_regs = (0..factor).map(|i| format!("{arg_ty} const &reg_{i}"));
    let arg_addr = ["void *row_addr".to_string()];
    let args = args_regs.chain(arg_addr).collect::<Vec<_>>().join(", ");

    let mut idx = 0usize;

    let placeholder_addr = format!("[{}]", placeholder(&mut idx));

    let placeholders_regs = comma_separated((0..factor).map(|_| placeholder(&mut idx)));
    let placeholders_regs = format!("{{{placeholders_regs}}}");

    let params_regs = comma_separated((0..factor).map(|i| format!(r#""r"(reg_{i})"#)));
    let param_addr = r#""r"(addr)"#;

    let is_transposed = if transpose { "_trans" } else { "" };
    let transposed_arg = if transpose { ".trans" } else { "" };
    let num = format!("x{factor}");

    let ty = match elem.size() {
        2 => "b16",
        1 => "b8",
        _ => unreachable!(),
    };

    // Note: smem technically an input
    format!(
        r#"
inline __device__ void
__stmatrix_m{width}n8_{elem}_{factor}x{is_transposed}({args}) {{
  uint32 addr = static_cast<uint32>(__cvta_generic_to_shared(row_addr));
  asm volatile("stmatrix.sync.aligned.m8n{width}.{num}{transposed_arg}.shared::cta.{ty}"
               " {placeholder_addr}, {placeholders_regs};"
               :: {param_addr}, {params_regs});
    }}
    "#
    )
}
