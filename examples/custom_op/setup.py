"""Build the fused bias+GELU CUDA extension."""

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="fused_bias_gelu",
    ext_modules=[
        CUDAExtension(
            name="fused_bias_gelu",
            sources=["fused_bias_gelu.cpp", "fused_bias_gelu_kernel.cu"],
            extra_compile_args={"nvcc": ["-O3", "--use_fast_math"]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
