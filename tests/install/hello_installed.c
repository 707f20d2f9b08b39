/* SPDX-License-Identifier: MIT */
/*
 * hello_installed.c - a user program built against an installed obc (only
 * <obc.h> and -lobc): creates the communicator from obcrun's environment,
 * broadcasts 1 MiB + 3 bytes from the last rank and checks every byte.
 * Exits 0 on success; prints what failed otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <obc.h>

#define NBYTES ((size_t)(1 << 20) + 3)

static int fail(const char *what, obc_result_t rc, const obc_comm_t *comm)
{
    fprintf(stderr, "hello_installed: %s: %s (%s)\n", what, obc_strerror(rc),
            obc_comm_last_error(comm));
    return 1;
}

int main(void)
{
    obc_comm_t *comm = NULL;
    unsigned char *buf = malloc(NBYTES);
    obc_result_t rc;
    int rank;
    int root;
    if (buf == NULL) {
        return 1;
    }
    rc = obc_comm_init_env(&comm);
    if (rc != OBC_SUCCESS) {
        return fail("obc_comm_init_env", rc, NULL);
    }
    rank = obc_comm_rank(comm);
    root = obc_comm_size(comm) - 1;
    for (size_t i = 0; i < NBYTES; i++) {
        buf[i] = rank == root ? (unsigned char)(i * 7 + i / 251) : 0;
    }
    rc = obc_bcast(buf, NBYTES, OBC_UINT8, root, comm);
    if (rc != OBC_SUCCESS) {
        return fail("obc_bcast", rc, comm);
    }
    for (size_t i = 0; i < NBYTES; i++) {
        if (buf[i] != (unsigned char)(i * 7 + i / 251)) {
            fprintf(stderr, "hello_installed: rank %d: byte %zu wrong\n", rank, i);
            return 1;
        }
    }
    printf("hello_installed: rank %d of %d ok (obc %s)\n", rank, obc_comm_size(comm),
           obc_version());
    rc = obc_comm_destroy(comm);
    free(buf);
    return rc == OBC_SUCCESS ? 0 : fail("obc_comm_destroy", rc, NULL);
}
