/* Loads slackindex's FTS5 tokenizer into the sqlite3 shell, so the shell can query an archive:
 *   .load ./slackindex_tokenizer
 * Built by scripts/sqlite3-compare.sh; not part of the Swift package. */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

int slackindex_register_tokenizer(sqlite3 *db);

int sqlite3_slackindextokenizer_init(sqlite3 *db, char **error, const sqlite3_api_routines *api) {
    SQLITE_EXTENSION_INIT2(api);
    (void)error;
    return slackindex_register_tokenizer(db);
}
