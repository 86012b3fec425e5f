/* query tests: to be written. */
#include "test.h"

void suite_query(void) {
}
