/* entity tests: to be written. */
#include "test.h"

void suite_entity(void) {
}
