/* The C embedding API of ptxforge: JIT-compile PTX and launch its kernels on the CPU from any language with a
 * C FFI. Mirrors the C++ API (ptxforge.hpp, which it is a thin shell over) with opaque handles and status
 * codes; separate from the CUDA-compatible cuda.h ABI of libcuda.so.1. Reference: docs/api.md.
 *
 * Errors: every function that can fail returns a ptxforge_status; on failure the calling thread's last error
 * holds a message and, for PTX problems, the diagnostics (ptxforge_last_error_*). It is replaced by the next
 * failure on the same thread and left alone by successes, like errno.
 * Threads: handles may be used from any thread; destroying a handle while another thread uses it is an error
 * of the program. Destroying a device, executable or stream waits for the work queued on it. */
#ifndef PTXFORGE_H
#define PTXFORGE_H

#include "ptxforge/api/Export.h"
#include "ptxforge/api/Version.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The numbers are those of ptxforge::ErrorCode. */
typedef enum ptxforge_status {
  PTXFORGE_SUCCESS = 0,
  PTXFORGE_ERROR_INVALID_ARGUMENT = 1,
  PTXFORGE_ERROR_FILE = 2,
  PTXFORGE_ERROR_INVALID_PTX = 3,
  PTXFORGE_ERROR_UNSUPPORTED_PTX_VERSION = 4,
  PTXFORGE_ERROR_UNSUPPORTED_TARGET = 5,
  PTXFORGE_ERROR_COMPILE_FAILED = 6,
  PTXFORGE_ERROR_NOT_FOUND = 7,
  PTXFORGE_ERROR_OUT_OF_MEMORY = 8,
  PTXFORGE_ERROR_INVALID_LAUNCH = 9,
  PTXFORGE_ERROR_ILLEGAL_ADDRESS = 10,
  PTXFORGE_ERROR_MISALIGNED_ADDRESS = 11,
  PTXFORGE_ERROR_ILLEGAL_INSTRUCTION = 12,
  PTXFORGE_ERROR_TRAP = 13,
  PTXFORGE_ERROR_ASSERT = 14,
  PTXFORGE_ERROR_DEADLOCK = 15,
  PTXFORGE_ERROR_NOT_SUPPORTED = 16,
  PTXFORGE_ERROR_INTERNAL = 17
} ptxforge_status;

typedef enum ptxforge_severity {
  PTXFORGE_SEVERITY_NOTE = 0,
  PTXFORGE_SEVERITY_WARNING = 1,
  PTXFORGE_SEVERITY_ERROR = 2
} ptxforge_severity;

typedef struct ptxforge_program_s *ptxforge_program;       /**< a parsed and verified PTX module */
typedef struct ptxforge_device_s *ptxforge_device;         /**< the CPU as a device */
typedef struct ptxforge_executable_s *ptxforge_executable; /**< a program compiled for a device */
typedef struct ptxforge_kernel_s *ptxforge_kernel;         /**< a kernel of an executable */
typedef struct ptxforge_stream_s *ptxforge_stream;         /**< an ordered queue of launches */
typedef struct ptxforge_buffer_s *ptxforge_buffer;         /**< device memory */
typedef struct ptxforge_object_s *ptxforge_object;         /**< host code compiled ahead of time */

/** A diagnostic. line 0: about the module as a whole. The strings belong to the API (see where each comes from). */
typedef struct ptxforge_diagnostic {
  const char *file;
  unsigned line, column;
  ptxforge_severity severity;
  const char *message;
  const char *source_line; /**< the text of the line, for a caret under column */
} ptxforge_diagnostic;

typedef struct ptxforge_device_options {
  unsigned cc_major, cc_minor; /**< compute capability; 0.0: PTXFORGE_DEVICE_CC, else 13.0 */
  unsigned workers;            /**< threads per launch; 0: one per core */
} ptxforge_device_options;

typedef struct ptxforge_compile_options {
  unsigned cc_major, cc_minor; /**< virtual compute capability to compile for; 0.0: the device's */
  unsigned opt_level;          /**< 0-3; ptxforge_compile_options_init sets 2 */
} ptxforge_compile_options;

typedef struct ptxforge_object_options {
  unsigned cc_major, cc_minor; /**< the virtual compute capability */
  unsigned opt_level;          /**< 0-3 */
  const char *cpu; /**< NULL or "host": this CPU; "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"; an LLVM CPU */
} ptxforge_object_options;

typedef struct ptxforge_launch_config {
  unsigned grid[3], block[3]; /**< x, y, z; each at least 1 */
  unsigned dynamic_shared_bytes;
} ptxforge_launch_config;

/** A kernel parameter; the strings live as long as the kernel handle. */
typedef struct ptxforge_param_info {
  const char *name;
  const char *type; /**< element type without dot: "u64", "f32" */
  unsigned vector_width;
  uint64_t array_length; /**< 0: not an array */
  int is_pointer;
  const char *pointer_space; /**< "global" for .ptr.global; "" otherwise */
  uint64_t offset, size, align;
} ptxforge_param_info;

/** The compute cache (one per process): compiled code kept across runs. */
typedef struct ptxforge_cache_config {
  const char *directory; /**< entries live directly in it */
  uint64_t max_bytes;    /**< least recently used entries are evicted beyond it (at most 4 GiB) */
  int enabled;
} ptxforge_cache_config;

typedef struct ptxforge_cache_stats {
  uint64_t entries, bytes;       /**< in the directory now */
  uint64_t hits, misses, stores; /**< since the cache was (re)configured */
  uint64_t evictions, corrupt;
} ptxforge_cache_stats;

/* Version and errors. */
PTXFORGE_API const char *ptxforge_version(void);     /**< the library's "0.1.0" */
PTXFORGE_API unsigned ptxforge_version_number(void); /**< as PTXFORGE_VERSION_NUMBER */
PTXFORGE_API const char *ptxforge_status_string(ptxforge_status status);
/** The calling thread's last error: its message ("" when none), and its diagnostics (valid until the next
 * failure on this thread). */
PTXFORGE_API const char *ptxforge_last_error_message(void);
PTXFORGE_API size_t ptxforge_last_error_diagnostic_count(void);
PTXFORGE_API ptxforge_status ptxforge_last_error_diagnostic(size_t index, ptxforge_diagnostic *out);

/* Programs: the front end. Invalid PTX fails with PTXFORGE_ERROR_INVALID_PTX, diagnostics in the last error. */
PTXFORGE_API ptxforge_status ptxforge_program_create(const char *ptx, size_t size, const char *name,
                                                     ptxforge_program *out);
PTXFORGE_API ptxforge_status ptxforge_program_create_from_file(const char *path, ptxforge_program *out);
PTXFORGE_API void ptxforge_program_destroy(ptxforge_program program);
/** Warnings and notes of a program (strings live as long as the program). */
PTXFORGE_API size_t ptxforge_program_diagnostic_count(ptxforge_program program);
PTXFORGE_API ptxforge_status ptxforge_program_diagnostic(ptxforge_program program, size_t index,
                                                         ptxforge_diagnostic *out);
/** The minimum compute capability (as 80 for 8.0) and PTX ISA version (as 70 for 7.0) the module needs. */
PTXFORGE_API ptxforge_status ptxforge_program_requirements(ptxforge_program program, unsigned *min_sm,
                                                           unsigned *min_ptx);
/** PTXFORGE_SUCCESS when a device of that compute capability can run the module; otherwise
 * PTXFORGE_ERROR_UNSUPPORTED_TARGET with the reasons as the last error's diagnostics. */
PTXFORGE_API ptxforge_status ptxforge_program_check_target(ptxforge_program program, unsigned cc_major,
                                                           unsigned cc_minor);

/* Devices, compilation. */
PTXFORGE_API void ptxforge_device_options_init(ptxforge_device_options *options);
PTXFORGE_API void ptxforge_compile_options_init(ptxforge_compile_options *options);
/** options may be NULL (defaults). */
PTXFORGE_API ptxforge_status ptxforge_device_create(const ptxforge_device_options *options, ptxforge_device *out);
/** Waits for the device's work. Executables, streams and buffers of it keep it alive until they go. */
PTXFORGE_API void ptxforge_device_destroy(ptxforge_device device);
PTXFORGE_API ptxforge_status ptxforge_device_compile(ptxforge_device device, ptxforge_program program,
                                                     const ptxforge_compile_options *options, ptxforge_executable *out);
PTXFORGE_API ptxforge_status ptxforge_device_synchronize(ptxforge_device device);
PTXFORGE_API ptxforge_status ptxforge_device_copy_to_device(ptxforge_device device, uint64_t dst, const void *src,
                                                            size_t size);
PTXFORGE_API ptxforge_status ptxforge_device_copy_to_host(ptxforge_device device, void *dst, uint64_t src, size_t size);

/* Ahead-of-time compilation. The bytes written by _serialize and _fatbinary: *size is the buffer's size on
 * entry and the bytes needed on return; a NULL or too small buffer returns PTXFORGE_ERROR_INVALID_ARGUMENT with
 * *size set, so a caller asks for the size first. */
PTXFORGE_API ptxforge_status ptxforge_object_compile(ptxforge_program program, const ptxforge_object_options *options,
                                                     ptxforge_object *out);
PTXFORGE_API void ptxforge_object_destroy(ptxforge_object object);
PTXFORGE_API const char *ptxforge_object_cpu(ptxforge_object object);
PTXFORGE_API ptxforge_status ptxforge_object_serialize(ptxforge_object object, void *buffer, size_t *size);
PTXFORGE_API ptxforge_status ptxforge_object_fatbinary(ptxforge_object object, void *buffer, size_t *size);
PTXFORGE_API ptxforge_status ptxforge_device_load(ptxforge_device device, ptxforge_object object,
                                                  ptxforge_executable *out);

/* Executables and kernels. */
PTXFORGE_API void ptxforge_executable_destroy(ptxforge_executable executable);
PTXFORGE_API size_t ptxforge_executable_kernel_count(ptxforge_executable executable);
PTXFORGE_API ptxforge_status ptxforge_executable_kernel_at(ptxforge_executable executable, size_t index,
                                                           ptxforge_kernel *out);
PTXFORGE_API ptxforge_status ptxforge_executable_kernel(ptxforge_executable executable, const char *name,
                                                        ptxforge_kernel *out);
PTXFORGE_API ptxforge_status ptxforge_executable_global(ptxforge_executable executable, const char *name,
                                                        uint64_t *address, size_t *size);
PTXFORGE_API void ptxforge_kernel_destroy(ptxforge_kernel kernel);
PTXFORGE_API const char *ptxforge_kernel_name(ptxforge_kernel kernel);
PTXFORGE_API size_t ptxforge_kernel_param_count(ptxforge_kernel kernel);
PTXFORGE_API ptxforge_status ptxforge_kernel_param(ptxforge_kernel kernel, size_t index, ptxforge_param_info *out);
/** Launches on the device's default stream and waits. args[i] points at arg_sizes[i] bytes, which must equal
 * parameter i's size. A kernel fault returns its status; the device stays usable. */
PTXFORGE_API ptxforge_status ptxforge_kernel_run(ptxforge_kernel kernel, const ptxforge_launch_config *config,
                                                 const void *const *args, const size_t *arg_sizes, size_t num_args);

/* Streams. */
PTXFORGE_API ptxforge_status ptxforge_stream_create(ptxforge_device device, ptxforge_stream *out);
PTXFORGE_API void ptxforge_stream_destroy(ptxforge_stream stream);
/** Queues a launch (configuration and argument errors are returned now, kernel faults by synchronize). */
PTXFORGE_API ptxforge_status ptxforge_stream_launch(ptxforge_stream stream, ptxforge_kernel kernel,
                                                    const ptxforge_launch_config *config, const void *const *args,
                                                    const size_t *arg_sizes, size_t num_args);
PTXFORGE_API ptxforge_status ptxforge_stream_synchronize(ptxforge_stream stream);

/* Device memory. */
PTXFORGE_API ptxforge_status ptxforge_buffer_create(ptxforge_device device, size_t size, ptxforge_buffer *out);
/** Waits for the device's work, then frees. */
PTXFORGE_API void ptxforge_buffer_destroy(ptxforge_buffer buffer);
PTXFORGE_API uint64_t ptxforge_buffer_address(ptxforge_buffer buffer);
PTXFORGE_API size_t ptxforge_buffer_size(ptxforge_buffer buffer);
PTXFORGE_API ptxforge_status ptxforge_buffer_write(ptxforge_buffer buffer, size_t offset, const void *src, size_t size);
PTXFORGE_API ptxforge_status ptxforge_buffer_read(ptxforge_buffer buffer, size_t offset, void *dst, size_t size);
PTXFORGE_API ptxforge_status ptxforge_buffer_fill(ptxforge_buffer buffer, uint8_t value);

/* The compute cache. It starts from CUDA_CACHE_PATH, CUDA_CACHE_DISABLE and CUDA_CACHE_MAXSIZE. */
PTXFORGE_API ptxforge_status ptxforge_cache_configure(const ptxforge_cache_config *config);
PTXFORGE_API ptxforge_status ptxforge_cache_get_stats(ptxforge_cache_stats *out);
PTXFORGE_API ptxforge_status ptxforge_cache_clear(void);

#ifdef __cplusplus
}
#endif

#endif /* PTXFORGE_H */
