pub use crate::{
    CubeLaunch, CubeType, RuntimeArg,
    codegen::{KernelExpansion, KernelIntegrator, KernelSettings},
    comment, comptime, comptime_type,
    compute::{KernelBuilder, KernelLauncher},
    cube, derive_cube_comptime,
    frontend::*,
    pod::CubeElement,
    terminate,
};
pub use cubecl_common::{flex32, format::type_name_short_sanitized, tf32};
pub use cubecl_ir::{AddressType, FastMath, Scope, StorageType, Type, VectorSize};
pub use cubecl_runtime::{
    client::ComputeClient,
    id::KernelId,
    kernel::*,
    runtime::Runtime,
    server::{CubeCount, CubeDim, ExecutionMode, LaunchError},
};

pub use crate::{define, define_scalar, define_size, size};
pub use cubecl_macros::*;
pub use num_traits::{clamp, clamp_max, clamp_min};
