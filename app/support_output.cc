#include <algorithm>

#include "app/output.h"

namespace cronledger::app {
namespace {

std::string Cell(const model::Json& item, const std::string& key) {
  if (!item.is_object() || !item.contains(key)) return "";
  const model::Json& v = item[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return model::DumpJson(v);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// YAML scalars: JSON strings are valid YAML double-quoted scalars, so reuse the JSON encoding.
void PrintYaml(std::FILE* out, const model::Json& v, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (v.is_object() && !v.empty()) {
    bool first = true;
    for (const auto& [key, value] : v.items()) {
      std::fprintf(out, "%s%s:", first && indent > 0 ? "" : pad.c_str(),
                   model::DumpJson(key).c_str());
      first = false;
      if ((value.is_object() || value.is_array()) && !value.empty()) {
        std::fprintf(out, "\n");
        PrintYaml(out, value, indent + 2);
      } else {
        std::fprintf(out, " %s\n", model::DumpJson(value).c_str());
      }
    }
  } else if (v.is_array() && !v.empty()) {
    for (const auto& el : v) {
      std::fprintf(out, "%s- ", pad.c_str());
      if ((el.is_object() || el.is_array()) && !el.empty()) {
        if (el.is_array()) std::fprintf(out, "\n");
        PrintYaml(out, el, el.is_object() ? indent + 2 : indent + 2);
      } else {
        std::fprintf(out, "%s\n", model::DumpJson(el).c_str());
      }
    }
  } else {
    std::fprintf(out, "%s%s\n", pad.c_str(), model::DumpJson(v).c_str());
  }
}

}  // namespace

Result<OutputFormat> ParseOutputFormat(std::string_view s) {
  if (s == "table") return OutputFormat::kTable;
  if (s == "json") return OutputFormat::kJson;
  if (s == "yaml") return OutputFormat::kYaml;
  if (s == "csv") return OutputFormat::kCsv;
  return Status::InvalidArgument("-o must be table, json, yaml or csv, not \"" + std::string(s) +
                                 "\"");
}

void PrintItems(std::FILE* out, OutputFormat format, const std::vector<std::string>& columns,
                const std::vector<model::Json>& items) {
  PrintItems(out, format, columns, items, model::Json::object());
}

void PrintItems(std::FILE* out, OutputFormat format, const std::vector<std::string>& columns,
                const std::vector<model::Json>& items, const model::Json& extra) {
  switch (format) {
    case OutputFormat::kJson: {
      model::Json doc = extra;
      doc["items"] = model::Json::array();
      for (const auto& item : items) doc["items"].push_back(item);
      std::fprintf(out, "%s\n", model::DumpJson(doc).c_str());
      return;
    }
    case OutputFormat::kYaml: {
      if (items.empty()) {
        std::fprintf(out, "items: []\n");
      } else {
        std::fprintf(out, "items:\n");
        PrintYaml(out, model::Json(items), 0);
      }
      for (const auto& [key, value] : extra.items()) {
        if ((value.is_object() || value.is_array()) && !value.empty()) {
          std::fprintf(out, "%s:\n", key.c_str());
          PrintYaml(out, value, 2);
        } else {
          std::fprintf(out, "%s: %s\n", key.c_str(), model::DumpJson(value).c_str());
        }
      }
      return;
    }
    case OutputFormat::kCsv: {
      for (size_t i = 0; i < columns.size(); ++i) {
        std::fprintf(out, "%s%s", i ? "," : "", CsvField(columns[i]).c_str());
      }
      std::fprintf(out, "\n");
      for (const auto& item : items) {
        for (size_t i = 0; i < columns.size(); ++i) {
          std::fprintf(out, "%s%s", i ? "," : "", CsvField(Cell(item, columns[i])).c_str());
        }
        std::fprintf(out, "\n");
      }
      return;
    }
    case OutputFormat::kTable: {
      std::vector<size_t> width(columns.size());
      for (size_t i = 0; i < columns.size(); ++i) width[i] = columns[i].size();
      for (const auto& item : items) {
        for (size_t i = 0; i < columns.size(); ++i) {
          width[i] = std::max(width[i], Cell(item, columns[i]).size());
        }
      }
      auto row = [&](const std::vector<std::string>& cells) {
        std::string line;
        for (size_t i = 0; i < cells.size(); ++i) {
          line += cells[i];
          if (i + 1 < cells.size()) line += std::string(width[i] - cells[i].size() + 3, ' ');
        }
        std::fprintf(out, "%s\n", line.c_str());
      };
      std::vector<std::string> header;
      for (const auto& c : columns) header.push_back(Upper(c));
      row(header);
      for (const auto& item : items) {
        std::vector<std::string> cells;
        for (const auto& c : columns) cells.push_back(Cell(item, c));
        row(cells);
      }
      return;
    }
  }
}

}  // namespace cronledger::app
