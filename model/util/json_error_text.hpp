#pragma once
// nlohmann::json's messages start with an internal tag
// ("[json.exception.out_of_range.406] number overflow parsing '1e400'");
// users get the explanation without the tag. The library echoes what it
// last read ("invalid string: ill-formed UTF-8 byte; last read: '"a\xff'"):
// bytes that are not UTF-8 are shown as U+FFFD, so that the message is text
// (a sweep's sweep.json holds its points' messages).
#include <nlohmann/json.hpp>

#include <string>

namespace ipusim::util {

// `text` with every byte that is not part of UTF-8 shown as U+FFFD: what a
// message prints of a name read from a file ("the .npy header gives
// 'sh\xffpe'") stays text on a terminal and in a JSON string.
inline std::string utf8Text(const std::string& text) {
  return nlohmann::json::parse(nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
      .get<std::string>();
}

// Whether `text` holds a control character (a newline would split a console
// line, an escape sequence drive the terminal).
inline bool holdsControlCharacter(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20) return true;
  return false;
}

// `text` as a line of the console shows it: as utf8Text, or, holding a
// control character, as the JSON string messages show such names by ("a\nb").
inline std::string oneLineText(const std::string& text) {
  if (holdsControlCharacter(text))
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return utf8Text(text);
}

inline std::string jsonErrorText(const std::string& what) {
  std::string text = what;
  if (text.rfind("[json.exception.", 0) == 0) {
    const auto end = text.find("] ");
    if (end != std::string::npos) text = text.substr(end + 2);
  }
  return utf8Text(text);
}

}  // namespace ipusim::util
