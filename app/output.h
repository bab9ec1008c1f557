#pragma once

// The shared printer for list-like command output (docs/design.md §4): `-o table|json|yaml|csv`.
// `json` prints {"items": [...]}; table and csv print the given columns in order; yaml prints
// the items as a YAML sequence under `items:`.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "model/json.h"
#include "model/result.h"

namespace cronledger::app {

enum class OutputFormat { kTable, kJson, kYaml, kCsv };

// "table" | "json" | "yaml" | "csv"; InvalidArgument otherwise.
Result<OutputFormat> ParseOutputFormat(std::string_view s);

// Prints `items` (JSON objects). `columns` are the keys shown by table and csv, in order; a
// missing key prints as empty. Scalars print as their text, objects and arrays as compact JSON.
void PrintItems(std::FILE* out, OutputFormat format, const std::vector<std::string>& columns,
                const std::vector<model::Json>& items);
// As above; json and yaml also print the members of `extra` (a JSON object whose keys are plain
// names other than "items") beside `items` at the top level. Table and csv print the items alone.
void PrintItems(std::FILE* out, OutputFormat format, const std::vector<std::string>& columns,
                const std::vector<model::Json>& items, const model::Json& extra);

}  // namespace cronledger::app
