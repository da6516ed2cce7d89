/* main.c - resource-tracker-bridge: the static tool's loader helper (src/lib/core/bridge.h). The
 * static binary, which has no dynamic loader, runs this small program through the target's own
 * glibc loader; it opens the target's libcurl and SQLite with dlopen and answers the tool's
 * requests on descriptor 3 (messages: core/wire.h) until that socket closes: loads, HTTP
 * requests (net/curl.c's rt_fetch, the same code as the dynamic build's), S3 payloads' SHA-256
 * (net/s3_sha256.c, libcrypto) and SQLite's calls (sqlite_serve.c). A transfer ends early when the tool
 * closes the socket: the kernel says so with SIGIO, and libcurl's progress callback sees the abort time passed. Built
 * for glibc 2.17 and later (glibc_floor.h), with its own entry point (no crt1.o, whose
 * __libc_start_main is glibc 2.34's). */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../core/bridge.h"
#include "../net/curl.h"
#include "../net/fetch_wire.h"
#include "../net/s3.h"
#include "resource_tracker.h"
#include "sqlite_serve.h"

#define FD 3

#ifdef RT_BRIDGE_OWN_START /* the static build's helper (CMakeLists.txt); the tests' is plain */
/* The entry point: glibc's own x86-64 one, calling __libc_start_main@GLIBC_2.2.5 (see above)
 * with no init function: glibc before 2.34 then runs none of this program's own constructors,
 * and it has none. */
__asm__(".text\n"
        ".globl _start\n"
        ".type _start,@function\n"
        "_start:\n"
        "  xor %ebp, %ebp\n"
        "  mov %rdx, %r9\n"
        "  pop %rsi\n"
        "  mov %rsp, %rdx\n"
        "  and $-16, %rsp\n"
        "  push %rax\n"
        "  push %rsp\n"
        "  xor %r8d, %r8d\n"
        "  xor %ecx, %ecx\n"
        "  lea main(%rip), %rdi\n"
        "  call *__libc_start_main@GOTPCREL(%rip)\n"
        "  hlt\n");
const int _IO_stdin_used = 0x20001; /* the libio ABI this program was built for, as crt1.o says */
#endif

/* Passed once the tool closes the socket during a transfer. */
static _Atomic double abort_time = INFINITY;

/* True when the tool has closed its end. Async-signal-safe. */
static bool peer_gone(void)
{
    struct pollfd p = {.fd = FD, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* SIGIO comes for any change on the socket (a request in, room to write): only a closed one
 * aborts */
static void on_sigio(int sig)
{
    (void)sig;
    int e = errno;
    if (peer_gone())
        atomic_store(&abort_time, -INFINITY);
    errno = e;
}

static void serve_load(rt_wire *q, rt_wire *a)
{
    const char *what = rt_wire_get_bytes(q, NULL);
    char err[300] = "";
    int ok = 0;
    if (what && strcmp(what, "curl") == 0)
        ok = rt_fetch_available(err, sizeof err) == RT_OK;
    else if (what && strcmp(what, "sqlite") == 0)
        ok = rt_sqlite_load(err, sizeof err) == RT_OK;
    else
        snprintf(err, sizeof err, "the helper loads no '%s'", what ? what : "");
    rt_wire_put_i64(a, ok);
    rt_wire_put_str(a, ok ? "" : err);
}

static void serve_fetch(rt_wire *q, rt_wire *a)
{
    rt_fetch_request req;
    const char *hdrs[RT_FETCH_WIRE_HEADERS + 1];
    rt_fetch_reply rep;
    memset(&rep, 0, sizeof rep);
    char err[512] = "";
    rt_error rc;
    if (!rt_fetch_wire_get_request(q, &req, hdrs)) {
        snprintf(err, sizeof err, "the request reached the helper malformed");
        rc = RT_ERR_INVALID;
    } else {
        atomic_store(&abort_time, INFINITY);
        if (peer_gone()) /* closed before the line above: its SIGIO came too early */
            atomic_store(&abort_time, -INFINITY);
        rc = rt_fetch(&req, &rep, err, sizeof err);
    }
    rt_fetch_wire_put_reply(a, rc, err, &rep);
    rt_fetch_reply_free(&rep);
}

static void serve_sha256(rt_wire *q, rt_wire *a)
{
    size_t n;
    const char *data = rt_wire_get_bytes(q, &n);
    char hex[65] = "", err[300] = "the request reached the helper malformed";
    rt_error rc = data ? rt_s3_sha256_hex(data, n, hex, err, sizeof err) : RT_ERR_INVALID;
    rt_wire_put_i64(a, rc);
    rt_wire_put_str(a, rc == RT_OK ? hex : err);
}

int main(void)
{
    /* secrets (the token, S3 keys) come in its requests: not readable through /proc/PID/mem by
     * other processes of the user (the job), nor written to a core dump; an exec had reset the
     * tool's own setting (cli/secure.c) */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL); /* the tool blocked them all across its fork */
    signal(SIGPIPE, SIG_IGN);
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(FD, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM) {
        fprintf(stderr, "resource-tracker-bridge: the static resource-tracker's helper: it starts this itself\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigio;
    sigaction(SIGIO, &sa, NULL);
    int on = 1, me = getpid();
    if (ioctl(FD, FIOSETOWN, &me) < 0 || ioctl(FD, FIOASYNC, &on) < 0)
        fprintf(stderr, "resource-tracker-bridge: no SIGIO on its socket (%s): a transfer ends at its timeout\n",
                strerror(errno));
    rt_fetch_abort_at(&abort_time);
    rt_wire q, a;
    rt_wire_init(&q);
    rt_wire_init(&a);
    for (;;) {
        if (rt_wire_recv(FD, &q, INFINITY, NULL) < 0)
            break; /* the tool closed its end: done */
        rt_wire_free(&a);
        rt_wire_init(&a);
        switch (rt_wire_get_i64(&q)) {
        case RT_BRIDGE_LOAD: serve_load(&q, &a); break;
        case RT_BRIDGE_FETCH: serve_fetch(&q, &a); break;
        case RT_BRIDGE_SQLITE: rt_bridge_sqlite_serve(&q, &a); break;
        case RT_BRIDGE_SHA256: serve_sha256(&q, &a); break;
        default: return 2; /* not the tool that built it */
        }
        if (rt_wire_send(FD, &a, INFINITY, NULL) < 0)
            break;
    }
    rt_wire_free(&q);
    rt_wire_free(&a);
    return 0;
}
