#pragma once
// The HTML report's style and script (matrix/report/report_page/page.css and page.js), compiled in by
// cmake/embed_text.cmake so the page needs no file at run time and fetches nothing.
namespace nm {

extern const char* const kReportPageCss;
extern const char* const kReportPageJs;

}  // namespace nm
