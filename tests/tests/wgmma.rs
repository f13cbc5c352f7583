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
        use flint_kernels::wgmma::{b_descriptor, check::product_error, cuda_device_has_wgmma};

        if !cuda_device_has_wgmma(0) {
            eprintln!("SKIPPED wgmma_products_match_reference_on_gpu: CUDA device 0 is not sm_90");
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
