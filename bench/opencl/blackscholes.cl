// OpenCL C twin of ../shared/bench/cuda/blackscholes.cu: work-group 256, full-precision exp/log/sqrt (the
// program is built without -cl-fast-relaxed-math).
inline float cnd(float d) {
  const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f,
              A4 = -1.821255978f, A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267794f;
  float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
  float c = RSQRT2PI * exp(-0.5f * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
  return d > 0.0f ? 1.0f - c : c;
}
__kernel void black_scholes(__global float *restrict call, __global float *restrict put,
                            __global const float *restrict S, __global const float *restrict X,
                            __global const float *restrict T, float R, float V, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i >= n) return;
  float s = S[i], x = X[i], t = T[i];
  float sqrtT = sqrt(t);
  float d1 = (log(s / x) + (R + 0.5f * V * V) * t) / (V * sqrtT);
  float d2 = d1 - V * sqrtT;
  float c1 = cnd(d1), c2 = cnd(d2);
  float expRT = exp(-R * t);
  call[i] = s * c1 - x * expRT * c2;
  put[i] = x * expRT * (1.0f - c2) - s * (1.0f - c1);
}
