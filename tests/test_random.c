/* random tests: to be written. */
#include "test.h"

void suite_random(void) {
}
