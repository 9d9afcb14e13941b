// The _nicmatrix extension: converts types and translates exceptions, nothing else.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/base/error.hpp"
#include "core/base/json_codec.hpp"
#include "core/base/version.hpp"
#include "ethtool_ctl/lab.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_nicmatrix, m) {
    m.doc() = "nicmatrix's C++ core";
    m.attr("__version__") = nm::kVersion;

    // nm::Error crosses the boundary as nicmatrix.Error, with the C++ message.
    static py::exception<nm::Error> error(m, "Error");
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const nm::Error& e) {
            error(e.what());
        }
    });

    m.def("lab_describe_json", [](const std::string& name) { return nm::Json(nm::lab_describe(name)).dump(); },
          py::arg("name"), "The lab NAME as a JSON string; raises Error if there is none.");
}
