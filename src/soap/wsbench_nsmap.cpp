// The one translation unit that includes the generated namespace table: it
// defines the global `namespaces` that libgsoapssl++ refers to. Compiled with
// the generated code, outside our warning flags.
#include "soapH.h"
#include "wsbench.nsmap"
