//! The warpgroup MMA primitive (`flint_kernels::wgmma`) against f64 products: CUDA on an
//! sm_90 GPU only.

/// Products with K-major and MN-major B over the shapes the attention kernels need (n from 16
/// to 256, k from 16 to 128), and a wrong reading of the descriptor that must fail.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_products_match_reference_on_gpu() {
    #[cfg(feature = "cuda")]
    {
        use cubecl::Runtime;
        use cubecl::cuda::CudaRuntime;
        use flint_kernels::wgmma::{b_descriptor, check::product_error};

        if flint_tests::skip_without_wgmma("wgmma_products_match_reference_on_gpu") {
            return;
        }
        let client = CudaRuntime::client(&Default::default());
        for (n, k, mn_major) in [
            (64, 64, false),
            (64, 64, true),
            (128, 128, false),
            (128, 64, true),
            (256, 16, false),
            (16, 128, true),
        ] {
            let err = product_error(&client, n, k, mn_major, None)
                .unwrap_or_else(|e| panic!("64x{n}x{k} (MN-major {mn_major}): {e}"));
            assert!(
                err < 1e-4,
                "64x{n}x{k} (MN-major {mn_major}): relative error {err:e}"
            );
        }
        // The check itself can fail: with the offsets swapped, a K-major B reads the wrong
        // core matrices (an MN-major one reads past its tile and faults, which would end
        // the process's CUDA context).
        let (lbo, sbo, _) = b_descriptor(64, 64, false);
        let err = product_error(&client, 64, 64, false, Some((sbo, lbo))).expect("launch");
        assert!(err > 1e-2, "swapped offsets gave relative error {err:e}");
    }
}

/// The warpgroup-MMA attention prototype (`flint_kernels::wgmma::attention`) against the f64
/// attention: 64- to 256-key tiles, two and three warpgroups, D = 64, 128 and 256, several
/// query blocks and key tiles per head; tilings whose two products share a shape are refused.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_attention_prototype_matches_reference_on_gpu() {
    #[cfg(feature = "cuda")]
    {
        use cubecl::Runtime;
        use cubecl::cuda::CudaRuntime;
        use flint_kernels::wgmma::attention::WgmmaFwdParams;
        use flint_kernels::wgmma::check::attention_error;

        if flint_tests::skip_without_wgmma("wgmma_attention_prototype_matches_reference_on_gpu") {
            return;
        }
        let client = CudaRuntime::client(&Default::default());
        for (warpgroups, block_kv, d) in [
            (2, 64, 128),
            (3, 64, 128),
            (2, 128, 64),
            (2, 256, 64),
            (2, 64, 256),
        ] {
            let p = WgmmaFwdParams {
                warpgroups,
                block_kv,
                head_dim: d,
                val_dim: d,
                pipelined: false,
                ablation: Default::default(),
                out_vec: 2,
                ..Default::default()
            };
            let shape = [1, 2, 768, d as usize];
            let (out, lse) =
                attention_error(&client, shape, p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
            // bf16 output: about 2^-8 of the largest magnitude.
            assert!(out < 2e-2, "{p:?}: output relative error {out:e}");
            assert!(lse < 1e-3, "{p:?}: LSE absolute error {lse:e}");
        }
        // Tilings whose two products share a shape are refused before any launch.
        let same = WgmmaFwdParams {
            warpgroups: 2,
            block_kv: 128,
            head_dim: 128,
            val_dim: 128,
            pipelined: false,
            ablation: Default::default(),
            out_vec: 2,
            ..Default::default()
        };
        let err = attention_error(&client, [1, 2, 384, 128], same).unwrap_err();
        assert!(err.contains("one shape"), "{err}");
    }
}

/// The pipelined warpgroup-MMA forward (`flint_kernels::wgmma::pipelined`) against the f64
/// attention: asynchronous products, Q in shared memory, double-buffered K and V. One key
/// tile (no loop), two (no refill), and many; two and three warpgroups; D = 64, 128 and 256,
/// including tilings whose two products share a shape; a tiling past the shared memory is
/// refused before any launch.
#[test]
#[cfg_attr(
    not(feature = "cuda"),
    ignore = "needs CUDA on an sm_90 GPU: warpgroup MMA (run with --features cuda)"
)]
fn wgmma_attention_pipelined_matches_reference_on_gpu() {
    #[cfg(feature = "cuda")]
    {
        use cubecl::Runtime;
        use cubecl::cuda::CudaRuntime;
        use flint_kernels::wgmma::attention::WgmmaFwdParams;
        use flint_kernels::wgmma::check::attention_error;

        if flint_tests::skip_without_wgmma("wgmma_attention_pipelined_matches_reference_on_gpu") {
            return;
        }
        let client = CudaRuntime::client(&Default::default());
        let params = |warpgroups, block_kv, d| WgmmaFwdParams {
            warpgroups,
            block_kv,
            head_dim: d,
            val_dim: d,
            pipelined: true,
            ablation: Default::default(),
            out_vec: 2,
            ..Default::default()
        };
        for (p, s) in [
            (params(2, 128, 128), 128),
            (params(2, 128, 128), 256),
            (params(2, 128, 128), 768),
            (params(2, 64, 128), 768),
            (params(3, 64, 128), 768),
            (params(2, 64, 64), 768),
            (params(2, 128, 64), 640),
            (params(2, 64, 256), 384),
        ] {
            let shape = [1, 2, s, p.head_dim as usize];
            let (out, lse) = attention_error(&client, shape, p)
                .unwrap_or_else(|e| panic!("{p:?} at {shape:?}: {e}"));
            // bf16 output: about 2^-8 of the largest magnitude.
            assert!(
                out < 2e-2,
                "{p:?} at {shape:?}: output relative error {out:e}"
            );
            assert!(lse < 1e-3, "{p:?} at {shape:?}: LSE absolute error {lse:e}");
        }
        let err = attention_error(&client, [1, 2, 768, 256], params(3, 256, 256)).unwrap_err();
        assert!(err.contains("shared memory"), "{err}");
    }
}
