// Defines the constant c_scale and scaled() for link_main.cu.
__constant__ float c_scale = 2.5f;
__device__ float scaled(float x) { return x * c_scale; }
