/* SPDX-License-Identifier: MIT */
/*
 * fuzz_boot_server.c - libFuzzer target: arbitrary bytes sent to the
 * rendezvous server's port, as a port scanner, an attacker or a confused
 * client would. Each input is one TCP connection to a real server (2 ranks,
 * a secret), written then half-closed; the reply is read until the server
 * closes or 100 ms pass. The server must answer garbage, truncated,
 * oversized and unauthenticated messages with an error on that connection,
 * never crash, read out of bounds or allocate what the bytes ask for
 * (ASan+UBSan and libFuzzer's RSS limit watch). The seed corpus holds a
 * valid hello with the right secret, so the fuzzer also reaches the admitted
 * paths; a server that ended (its ranks vanished) is replaced by a new one.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"

/* The secret of the seed corpus's valid hello (tests/fuzz/make_corpus.py). */
#define FUZZ_SECRET "fuzz-secret-0123456789abcdef"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int server_port;

static void start_server(void)
{
    struct obc__boot_endpoint ep;
    struct obc__err err;
    memset(&ep, 0, sizeof(ep));
    strcpy(ep.host, "127.0.0.1");
    strcpy(ep.secret, FUZZ_SECRET);
    obc__err_init(&err);
    if (obc__boot_serve(&ep, 2, 2000000000ll, &err) != OBC_SUCCESS) {
        __builtin_trap();
    }
    obc__err_fini(&err);
    server_port = ep.port;
}

static int connect_server(void)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)server_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = server_port ? connect_server() : -1;
    if (fd < 0) { /* first input, or the last server ended */
        start_server();
        fd = connect_server();
        if (fd < 0) {
            __builtin_trap();
        }
    }
    for (size_t sent = 0; sent < size;) {
        ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
        if (n <= 0) {
            break; /* the server already rejected us */
        }
        sent += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    char reply[512];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, 100) > 0 && read(fd, reply, sizeof(reply)) > 0) {
    }
    close(fd);
    return 0;
}
