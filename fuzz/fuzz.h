/*
 * What every fuzz target defines (libFuzzer's interface), and what the
 * targets share: the fake masterd of master.c.
 */
#ifndef R3Q_FUZZ_H
#define R3Q_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

/* fuzz/asan.c */
const char *__asan_default_options(void);

/* fuzz/evmem.c */
void	 fz_evmem_init(void);

/* fuzz/util.c */
char	*fz_tmpfile(const void *, size_t);
void	 fz_tmpfile_done(void);

#endif /* R3Q_FUZZ_H */
