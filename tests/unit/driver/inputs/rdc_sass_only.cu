// A translation unit with relocatable SASS only (like libcudadevrt's for most GPUs): ptxforge cannot run it,
// so a linked program leaves it out, and only what needs its symbols fails.
__device__ int sass_only_twice(int x) { return 2 * x; }
