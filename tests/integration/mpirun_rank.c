/* SPDX-License-Identifier: MIT */
/*
 * mpirun_rank.c - one rank of the job mpirun_openmpi.sh starts with the real
 * mpirun.openmpi. Not an MPI program: obc_comm_init_env places it from Open
 * MPI's variables alone, so its rank must be OMPI_COMM_WORLD_RANK. Then a
 * verified broadcast, and a line with its rank and size for the script.
 * argv[1]: the number of ranks mpirun was asked for.
 */
/* obct: helper */
#include <stdio.h>
#include <stdlib.h>

#include "bcase.h"
#include "obct.h"

int main(int argc, char **argv)
{
    const char *ompi_rank = getenv("OMPI_COMM_WORLD_RANK");
    obc_comm_t *comm;
    int rank, size;
    OBCT_ASSERT_MSG(argc == 2, "usage: mpirun_rank NRANKS");
    OBCT_ASSERT_MSG(ompi_rank != NULL, "OMPI_COMM_WORLD_RANK is not set: not under mpirun?");
    comm = obct_comm_from_env();
    rank = obc_comm_rank(comm);
    size = obc_comm_size(comm);
    OBCT_EQ_INT(rank, atoi(ompi_rank));
    OBCT_EQ_INT(size, atoi(argv[1]));
    obct_bcast_verified(comm, 100003, OBC_FLOAT32, size - 1, 0x6d706972ull, OBCT_IN_PLACE);
    OBCT_OK(obc_comm_destroy(comm), NULL);
    if (obct_failures() == 0) {
        printf("mpirun_rank: rank %d of %d ok\n", rank, size);
    }
    return obct_finish("mpirun_rank");
}
