/* pg_dl.h - the calls of libpq.so.5 the PostgreSQL engine (db_pg.c) makes, resolved by pg_dl.c at
 * first use (dlopen): no libpq header nor library is needed to build. The types are opaque here;
 * the enumerations' numbers are libpq-fe.h's (stable since libpq 5). Internal to the library. */
#ifndef RT_PG_DL_H
#define RT_PG_DL_H

#include <stddef.h>

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

enum { PG_CONNECTION_OK = 0, PG_CONNECTION_BAD = 1 };
enum { PG_POLLING_FAILED = 0, PG_POLLING_READING = 1, PG_POLLING_WRITING = 2, PG_POLLING_OK = 3 };
enum {
    PG_RES_EMPTY_QUERY = 0,
    PG_RES_COMMAND_OK = 1,
    PG_RES_TUPLES_OK = 2,
    PG_RES_FATAL_ERROR = 7,
    PG_RES_SINGLE_TUPLE = 9,
};
enum { PG_TRANS_IDLE = 0, PG_TRANS_ACTIVE = 1, PG_TRANS_INTRANS = 2, PG_TRANS_INERROR = 3, PG_TRANS_UNKNOWN = 4 };
#define PG_DIAG_SQLSTATE 'C'
#define PG_DIAG_MESSAGE_PRIMARY 'M'

typedef struct rt_pg_api {
    PGconn *(*connectStartParams)(const char *const *keywords, const char *const *values, int expand_dbname);
    int (*connectPoll)(PGconn *);
    int (*status)(const PGconn *);
    int (*socket)(const PGconn *);
    char *(*errorMessage)(const PGconn *);
    void (*finish)(PGconn *);
    int (*setnonblocking)(PGconn *, int);
    int (*flush)(PGconn *);
    int (*sendQuery)(PGconn *, const char *);
    int (*sendQueryParams)(PGconn *, const char *, int, const unsigned int *, const char *const *, const int *,
                           const int *, int);
    int (*setSingleRowMode)(PGconn *);
    int (*consumeInput)(PGconn *);
    int (*isBusy)(PGconn *);
    PGresult *(*getResult)(PGconn *);
    int (*resultStatus)(const PGresult *);
    char *(*resultErrorField)(const PGresult *, int);
    char *(*resultErrorMessage)(const PGresult *);
    void (*clear)(PGresult *);
    int (*ntuples)(const PGresult *);
    int (*nfields)(const PGresult *);
    char *(*fname)(const PGresult *, int);
    unsigned int (*ftype)(const PGresult *, int);
    char *(*getvalue)(const PGresult *, int, int);
    int (*getisnull)(const PGresult *, int, int);
    int (*transactionStatus)(const PGconn *);
} rt_pg_api;

/* The calls once rt_pg_load (resource_tracker/db.h) has returned RT_OK; NULL before. */
const rt_pg_api *rt_pg_calls(void);

#endif
