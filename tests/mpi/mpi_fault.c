/* SPDX-License-Identifier: MIT */
/*
 * mpi_fault.c - a rank lost under the layer (mpi_fault.sh): the last rank
 * SIGKILLs itself after a first served MPI_Allreduce; the others' next one
 * must come back (MPI_ERRORS_RETURN) with error class MPI_ERR_OTHER and a
 * string naming the lost rank, well within the bound mpi_fault.sh sets,
 * although the layer sets no timeout (MPI never times out; obc still sees
 * the peer go). Each survivor prints one "mpi_fault: rank R: ..." line and
 * leaves without MPI_Finalize (which would wait for the dead rank).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank = 0;
    int n = 0;
    int v = 1;
    int sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* the first served call makes the obc communicator on every rank */
    if (MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS || sum != n) {
        printf("mpi_fault: rank %d: the first MPI_Allreduce failed\n", rank);
        return 1;
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    if (rank == n - 1) {
        raise(SIGKILL);
    }
    double t0 = MPI_Wtime();
    int rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double dt = MPI_Wtime() - t0;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, text, &len);
    }
    printf("mpi_fault: rank %d: %s after %.1f s: %s\n", rank,
           rc == MPI_SUCCESS ? "MPI_SUCCESS" : (cls == MPI_ERR_OTHER ? "MPI_ERR_OTHER" : "other"),
           dt, text);
    fflush(stdout);
    /* A launcher may end the job when the first survivor leaves without
     * MPI_Finalize (Hydra does): the others get two seconds to report. */
    sleep(2);
    _exit(0);
}
