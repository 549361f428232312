// The CLI's --json output (schemas in docs/cli.md) uses the library's JSON writer.
#pragma once

#include "util/json.h"

namespace lowbit::cli {

using Json = lowbit::JsonWriter;

}  // namespace lowbit::cli
