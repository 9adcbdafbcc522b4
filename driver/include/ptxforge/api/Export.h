/* Symbol visibility of the embedding API: libptxforge.so is built with hidden visibility and exports only what
 * carries PTXFORGE_API (everything ptxforge links in statically stays private to it). C and C++. */
#ifndef PTXFORGE_API_EXPORT_H
#define PTXFORGE_API_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define PTXFORGE_API __attribute__((visibility("default")))
#else
#define PTXFORGE_API
#endif

#endif /* PTXFORGE_API_EXPORT_H */
