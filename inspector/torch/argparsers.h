/* The references torch's argument parsers keep to parameter names. Every torch function bound by
 * hand or by codegen parses its arguments with a function-local `static PythonArgParser parser`
 * (torch/csrc/utils/python_arg_parser.h), made on the function's first call, in
 * libtorch_python's .bss: a std::vector of FunctionSignatures, each a std::string name and a
 * std::vector of FunctionParameters, each holding its name interned (`PyObject *python_name`, a
 * reference never released) and, for numpy's spellings, more in `numpy_python_names` (a
 * c10::SmallVector<PyObject *, 5>). No Python object leads to them, so on a real heap (a GPT-2
 * step) hundreds of strs kept only so had references not explained.
 *
 * No symbol names them all (each is a local static), so the .bss is read for their shape, each
 * found one checked whole: every parameter's python_name must be a str whose text is the
 * parameter's std::string name, and every numpy name a str, else the parser is not taken. The
 * strides (sizeof FunctionSignature and FunctionParameter) and the std::string ABI differ
 * between releases; each parser's are those under which every element checks. A str's references are explained where the
 * parsers' words to it are exactly as many as its references not explained (the balance confirms
 * them, as it does a library's static word), each a C reference named after its function and
 * parameter: `<torch argument parser: add(other)>`. */
#ifndef CULEAK_TORCH_ARGPARSERS_H
#define CULEAK_TORCH_ARGPARSERS_H

#include <stdbool.h>

#include "cpython/heap.h"

/* Adds those references to h's books (py_books_add_c_ref); true when it added any, for the
 * caller to split what no root reaches again. */
bool torch_argparsers_explain(struct py_heap *h);

#endif
