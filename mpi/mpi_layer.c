/* SPDX-License-Identifier: MIT */
/*
 * mpi_layer.c - the layer's state: one obc communicator per MPI
 * communicator, made lazily at its first served call and cached as an MPI
 * attribute (its delete callback destroys it with the MPI communicator),
 * all destroyed at MPI_Finalize before PMPI_Finalize; the served/passed
 * counters; errors handed to MPI's error handler; the datatype and op
 * tables; packed views of buffers whose datatype is not plain bytes.
 */
#include "mpi_layer.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One MPI communicator's obc communicator. oc is NULL when it could not be
 * made on every rank: comm is then passed to MPI for good. */
struct obc__mpi_entry {
    obc_comm_t *oc;
    bool is_crowded; /* some host has more of comm's ranks than CPUs (all agree) */
    MPI_Comm mcomm;
    struct obc__mpi_entry *next;
};

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static struct obc__mpi_env env;
static int keyval = MPI_KEYVAL_INVALID;
/* guards entries (the live list MPI_Finalize walks); never held across an
 * MPI or obc call, so a delete callback run inside PMPI can take it */
static pthread_mutex_t entries_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obc__mpi_entry *entries;
/* relaxed: plain tallies, read once at MPI_Finalize after the calls ended */
static atomic_ulong nserved;
static atomic_ulong npassed;

void obc__mpi_count_served(void)
{
    atomic_fetch_add_explicit(&nserved, 1, memory_order_relaxed);
}

void obc__mpi_count_passed(void)
{
    atomic_fetch_add_explicit(&npassed, 1, memory_order_relaxed);
}

static void unlink_entry(struct obc__mpi_entry *e)
{
    pthread_mutex_lock(&entries_lock);
    for (struct obc__mpi_entry **p = &entries; *p != NULL; p = &(*p)->next) {
        if (*p == e) {
            *p = e->next;
            break;
        }
    }
    pthread_mutex_unlock(&entries_lock);
}

/* The attribute's delete callback: MPI_Comm_free (or MPI_Finalize through
 * PMPI_Comm_delete_attr) ends the obc communicator with its MPI one.
 * obc_comm_destroy is local, so ranks need not free in step. */
static int delete_entry(MPI_Comm comm, int kv, void *attr, void *extra)
{
    struct obc__mpi_entry *e = attr;
    (void)comm;
    (void)kv;
    (void)extra;
    unlink_entry(e);
    if (e->oc != NULL) {
        obc_comm_destroy(e->oc);
    }
    free(e);
    return MPI_SUCCESS;
}

static void setup(void)
{
    obc__mpi_env_read(&env);
    if (!env.is_enabled) {
        return;
    }
    /* MPI_COMM_NULL_COPY_FN: a duplicate gets its own obc communicator at its
     * first served call (MPI_Comm_dup is collective, so all ranks agree). */
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_entry, &keyval, NULL) !=
        MPI_SUCCESS) {
        fprintf(stderr, "obc-mpi: cannot create an attribute key; passing every call to MPI\n");
        env.is_enabled = false;
    }
}

/* Whether this machine has more of oc's ranks than CPUs, as libobc itself
 * judges it (its waits then sleep, and MPI's small-message path, which
 * spins, is the better one for some calls: mpi_size.c). */
static bool machine_is_crowded(const obc_comm_t *oc)
{
    int ranks = 0, cpus = 0;
    return oc != NULL && obc_comm_machine_info(oc, &ranks, &cpus) == OBC_SUCCESS && ranks > cpus;
}

/* Make e's obc communicator: rank 0 makes the id, PMPI_Bcast hands it to
 * all, each joins; then one PMPI_Allreduce makes the outcome common, so a
 * rank that failed never leaves the others serving alone, and makes every
 * rank count comm as crowded when one host is. */
static void make_comm(struct obc__mpi_entry *e, MPI_Comm comm)
{
    int rank = 0;
    int nranks = 1;
    int ok = 1;
    obc_unique_id_t id;
    obc_comm_t *oc = NULL;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &nranks);
    memset(&id, 0, sizeof id);
    if (rank == 0 && obc_get_unique_id(&id) != OBC_SUCCESS) {
        ok = 0;
    }
    PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (ok) {
        PMPI_Bcast(id.bytes, (int)sizeof id.bytes, MPI_BYTE, 0, comm);
        obc_result_t r = obc_comm_init_rank(&oc, nranks, &id, rank);
        if (r != OBC_SUCCESS) {
            fprintf(stderr,
                    "obc-mpi: rank %d: obc communicator of %d ranks failed (%s); "
                    "this communicator's calls go to MPI\n",
                    rank, nranks, obc_result_name(r));
            oc = NULL;
            ok = 0;
        }
    }
    /* the minimum of {made here, this machine not crowded} */
    int mine[2] = {ok, !(obc__mpi_size_uses_crowding() && machine_is_crowded(oc))};
    int all[2] = {0, 0};
    PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, comm);
    if (!all[0] && oc != NULL) {
        obc_comm_destroy(oc);
        oc = NULL;
    }
    /* MPI never times out: wait forever unless the user asked for a bound.
     * A lost peer is still seen by obc's health checks and reported. */
    if (oc != NULL && !env.has_timeout) {
        obc_comm_set_timeout(oc, 0);
    }
    e->oc = oc;
    e->is_crowded = !all[1];
}

/* comm's entry, made at its first call (collective then), or NULL when the
 * layer is off or comm is not an intra-communicator. */
static struct obc__mpi_entry *entry_of(MPI_Comm comm)
{
    int is_inter = 0;
    int flag = 0;
    void *attr = NULL;
    pthread_once(&setup_once, setup);
    if (!env.is_enabled || comm == MPI_COMM_NULL) {
        return NULL;
    }
    /* Inter-communicators (two groups) are MPI's: obc has one group. */
    if (PMPI_Comm_test_inter(comm, &is_inter) != MPI_SUCCESS || is_inter) {
        return NULL;
    }
    if (PMPI_Comm_get_attr(comm, keyval, &attr, &flag) == MPI_SUCCESS && flag) {
        return attr;
    }
    struct obc__mpi_entry *e = calloc(1, sizeof *e);
    if (e == NULL) {
        return NULL; /* every rank of a failed malloc would differ: see docs/mpi.md */
    }
    e->mcomm = comm;
    make_comm(e, comm);
    pthread_mutex_lock(&entries_lock);
    e->next = entries;
    entries = e;
    pthread_mutex_unlock(&entries_lock);
    PMPI_Comm_set_attr(comm, keyval, e);
    return e;
}

obc_comm_t *obc__mpi_comm_sized(MPI_Comm comm, enum obc__mpi_call call, long long nbytes)
{
    /* Too small crowded or not: pass at once, without the attribute lookup
     * (a passed call should cost what MPI's own does). Every rank decides
     * alike, so the communicator's entry is still made at the same call on
     * every rank: the first one that needs it. */
    pthread_once(&setup_once, setup);
    if (nbytes < obc__mpi_min_bytes(&env, call, false) &&
        nbytes < obc__mpi_min_bytes(&env, call, true)) {
        return NULL;
    }
    struct obc__mpi_entry *e = entry_of(comm);
    if (e == NULL || e->oc == NULL || nbytes < obc__mpi_min_bytes(&env, call, e->is_crowded)) {
        return NULL;
    }
    return e->oc;
}

long long obc__mpi_bytes(long long count, MPI_Datatype type)
{
    int size = 0;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size == MPI_UNDEFINED || size < 0) {
        return LLONG_MAX;
    }
    return size > 0 && count > LLONG_MAX / size ? LLONG_MAX : count * size;
}

static bool other_code(const char *msg, int *code)
{
    char back[MPI_MAX_ERROR_STRING];
    int len = 0;
    int cls = MPI_SUCCESS;
    return PMPI_Add_error_code(MPI_ERR_OTHER, code) == MPI_SUCCESS &&
        PMPI_Add_error_string(*code, msg) == MPI_SUCCESS &&
        PMPI_Error_class(*code, &cls) == MPI_SUCCESS && cls == MPI_ERR_OTHER &&
        PMPI_Error_string(*code, back, &len) == MPI_SUCCESS && strcmp(back, msg) == 0;
}

int obc__mpi_fail(MPI_Comm comm, const char *call, obc_comm_t *oc, obc_result_t r)
{
    char msg[MPI_MAX_ERROR_STRING];
    int rank = -1;
    int code = MPI_ERR_OTHER;
    PMPI_Comm_rank(comm, &rank);
    snprintf(msg, sizeof msg, "obc-mpi: %s failed on rank %d: %s: %s", call, rank,
             obc_result_name(r), obc_comm_last_error(oc));
    fprintf(stderr, "%s\n", msg);
    /* A code of class MPI_ERR_OTHER carrying the text, so MPI_Error_string
     * and the fatal handler's output say what happened. Open MPI allows such
     * a code; MPICH 4.0 accepts the calls but then reads the code as one of
     * its own, so the code is kept only if it reads back as written. */
    if (!other_code(msg, &code)) {
        code = MPI_ERR_OTHER;
    }
    PMPI_Comm_call_errhandler(comm, code);
    return code;
}

OBC_MPI_EXPORT int MPI_Finalize(void)
{
    pthread_once(&setup_once, setup);
    if (env.is_enabled) {
        /* Delete the attribute on every live communicator (its callback
         * destroys the obc communicator and unlinks the entry); MPI frees
         * the others' attributes itself. */
        for (;;) {
            pthread_mutex_lock(&entries_lock);
            struct obc__mpi_entry *e = entries;
            MPI_Comm c = e != NULL ? e->mcomm : MPI_COMM_NULL;
            pthread_mutex_unlock(&entries_lock);
            if (e == NULL) {
                break;
            }
            if (PMPI_Comm_delete_attr(c, keyval) != MPI_SUCCESS) {
                delete_entry(c, keyval, e, NULL);
            }
        }
        PMPI_Comm_free_keyval(&keyval);
    }
    if (env.is_report) {
        int rank = -1;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) {
            fprintf(stderr, "obc-mpi: served %lu calls through obc, passed %lu to MPI\n",
                    atomic_load(&nserved), atomic_load(&npassed));
        }
    }
    return PMPI_Finalize();
}

/* ---- datatypes and ops ---- */

/* obc's dtype for a predefined MPI type, by kind and size: MPI_LONG is int64
 * here because it is 8 bytes here. Types obc lacks (short, long double,
 * complex, pairs such as MPI_2INT, MPI_CHAR and MPI_BYTE, which MPI does not
 * reduce arithmetically) have none. */
static bool named_dtype(MPI_Datatype t, obc_dtype_t *out)
{
    static const obc_dtype_t sint[9] = {[1] = OBC_INT8, [4] = OBC_INT32, [8] = OBC_INT64};
    static const obc_dtype_t uint[9] = {[1] = OBC_UINT8, [4] = OBC_UINT32, [8] = OBC_UINT64};
    /* Not MPI_AINT, MPI_OFFSET, MPI_COUNT: Open MPI 4.1 computes MPI_MIN on
     * MPI_OFFSET as if unsigned, and the layer must not differ from it. */
    const MPI_Datatype signed_types[] = {MPI_SIGNED_CHAR, MPI_INT8_T,    MPI_INT,    MPI_INT32_T,
                                         MPI_LONG,        MPI_LONG_LONG, MPI_INT64_T};
    const MPI_Datatype unsigned_types[] = {
        MPI_UNSIGNED_CHAR,      MPI_UINT8_T, MPI_UNSIGNED, MPI_UINT32_T, MPI_UNSIGNED_LONG,
        MPI_UNSIGNED_LONG_LONG, MPI_UINT64_T};
    int size = 0;
    if (t == MPI_FLOAT) {
        *out = OBC_FLOAT32;
        return true;
    }
    if (t == MPI_DOUBLE) {
        *out = OBC_FLOAT64;
        return true;
    }
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS || (size != 1 && size != 4 && size != 8)) {
        return false;
    }
    for (size_t i = 0; i < sizeof signed_types / sizeof signed_types[0]; i++) {
        if (t == signed_types[i]) {
            *out = sint[size];
            return true;
        }
    }
    for (size_t i = 0; i < sizeof unsigned_types / sizeof unsigned_types[0]; i++) {
        if (t == unsigned_types[i]) {
            *out = uint[size];
            return true;
        }
    }
    return false;
}

static bool is_named(MPI_Datatype t)
{
    int ni = 0;
    int na = 0;
    int nd = 0;
    int combiner = 0;
    return PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
        combiner == MPI_COMBINER_NAMED;
}

bool obc__mpi_reduce_dtype(MPI_Datatype type, obc_dtype_t *dtype, size_t *elems_per_item)
{
    int size = 0;
    /* Both MPIs apply predefined ops to predefined types only and fail the
     * call on a derived one (Open MPI: "not defined for non-intrinsic
     * datatypes", MPICH: "operation not defined for this datatype"); a
     * rank whose type is derived fails in PMPI exactly as without the
     * layer, so this local test is all the agreement a valid program needs. */
    if (type == MPI_DATATYPE_NULL || !is_named(type) || !named_dtype(type, dtype) ||
        PMPI_Type_size(type, &size) != MPI_SUCCESS) {
        return false;
    }
    *elems_per_item = (size_t)size / obc_dtype_size(*dtype);
    return true;
}

bool obc__mpi_reduce_op(MPI_Op op, obc_redop_t *out)
{
    if (op == MPI_SUM) {
        *out = OBC_SUM;
    } else if (op == MPI_PROD) {
        *out = OBC_PROD;
    } else if (op == MPI_MIN) {
        *out = OBC_MIN;
    } else if (op == MPI_MAX) {
        *out = OBC_MAX;
    } else {
        return false;
    }
    return true;
}

/* ---- views ---- */

/* Used where it lies: a predefined type with no gaps (MPI_LONG_DOUBLE_INT
 * and the like have padding, so they are packed). */
bool obc__mpi_type_is_direct(MPI_Datatype t)
{
    int size = 0;
    MPI_Aint lb = 0;
    MPI_Aint extent = 0;
    MPI_Aint true_lb = 0;
    MPI_Aint true_extent = 0;
    return is_named(t) && PMPI_Type_size(t, &size) == MPI_SUCCESS &&
        PMPI_Type_get_extent(t, &lb, &extent) == MPI_SUCCESS &&
        PMPI_Type_get_true_extent(t, &true_lb, &true_extent) == MPI_SUCCESS && lb == 0 &&
        true_lb == 0 && extent == size && true_extent == size;
}

int obc__mpi_view_open(struct obc__mpi_view *v, const void *user, long long count,
                       MPI_Datatype type, bool load, MPI_Comm comm)
{
    int size = 0;
    memset(v, 0, sizeof *v);
    v->user = (void *)user;
    v->count = count;
    v->type = type;
    if (count < 0) {
        return MPI_ERR_COUNT;
    }
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS) {
        return MPI_ERR_TYPE;
    }
    v->nbytes = (size_t)count * (size_t)size;
    if (obc__mpi_type_is_direct(type) || v->nbytes == 0) {
        v->bytes = v->user;
        return MPI_SUCCESS;
    }
    if (v->nbytes > (size_t)INT32_MAX) {
        return MPI_ERR_COUNT; /* PMPI_Pack counts bytes in an int */
    }
    v->bytes = malloc(v->nbytes);
    if (v->bytes == NULL) {
        return MPI_ERR_NO_MEM;
    }
    v->is_packed = true;
    if (load) {
        int pos = 0;
        int rc = PMPI_Pack(user, (int)count, type, v->bytes, (int)v->nbytes, &pos, comm);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

int obc__mpi_view_close(struct obc__mpi_view *v, bool store, long long items, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    if (!v->is_packed) {
        return MPI_SUCCESS;
    }
    if (store && items > 0) {
        int pos = 0;
        /* a packed view holds at most INT32_MAX bytes, so items fits an int */
        rc = PMPI_Unpack(v->bytes, (int)v->nbytes, &pos, v->user, (int)items, v->type, comm);
    }
    free(v->bytes);
    v->bytes = NULL;
    v->is_packed = false;
    return rc;
}

int obc__mpi_finish(MPI_Comm comm, const char *call, obc_comm_t *oc, obc_result_t r,
                    struct obc__mpi_view *in, struct obc__mpi_view *out, long long items)
{
    int rc = MPI_SUCCESS;
    if (in != NULL) {
        obc__mpi_view_close(in, false, 0, comm);
    }
    if (out != NULL) {
        rc = obc__mpi_view_close(out, r == OBC_SUCCESS, items, comm);
    }
    if (r != OBC_SUCCESS) {
        return obc__mpi_fail(comm, call, oc, r);
    }
    return rc;
}
