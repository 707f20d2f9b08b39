/* copy_distance.c - memcpy and process_vm_readv (of this process) of N bytes at each
 * destination-source distance 0, 4, ..., 60 (argv: N [source offset]); best of 300, GB/s. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 0;
    int so = argc > 2 ? atoi(argv[2]) : 0;
    char *s = NULL, *d = NULL;
    if (argc < 2 || posix_memalign((void **)&s, 4096, n + 8192) != 0 ||
        posix_memalign((void **)&d, 4096, n + 8192) != 0) {
        return 1;
    }
    memset(s, 1, n + 8192);
    memset(d, 2, n + 8192);
    s += so;
    for (int o = 0; o < 64; o += 4) {
        double b1 = 1e9, b2 = 1e9;
        for (int i = 0; i < 300; i++) {
            double t = now();
            memcpy(d + o, s, n);
            t = now() - t;
            if (t < b1)
                b1 = t;
            struct iovec l = {d + o, n}, r = {s, n};
            t = now();
            process_vm_readv(getpid(), &l, 1, &r, 1, 0);
            t = now() - t;
            if (t < b2)
                b2 = t;
        }
        printf("rel %2d: memcpy %5.1f  cma %5.1f\n", o, n / b1 / 1e9, n / b2 / 1e9);
    }
}
