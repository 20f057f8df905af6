/*
 * sha256.h: SHA-256 of a byte string. No allocation, no global state: safe
 * from any thread.
 */
#ifndef RIGD_SHA256_H
#define RIGD_SHA256_H

#include <stddef.h>

#define SHA256_LEN 32   /* bytes of a digest */

/* Writes the SHA-256 digest of the 'len' bytes at 'data' to 'out'. */
void sha256_digest(const void *data, size_t len, unsigned char out[SHA256_LEN]);

#endif
