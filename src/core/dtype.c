/* dtype.c — ONNX element types: names and sizes. */
#include "core.h"

const char *dlp_dtype_name(dlp_dtype t) {
    switch (t) {
    case DLP_DT_FLOAT: return "float32";
    case DLP_DT_UINT8: return "uint8";
    case DLP_DT_INT8: return "int8";
    case DLP_DT_UINT16: return "uint16";
    case DLP_DT_INT16: return "int16";
    case DLP_DT_INT32: return "int32";
    case DLP_DT_INT64: return "int64";
    case DLP_DT_STRING: return "string";
    case DLP_DT_BOOL: return "bool";
    case DLP_DT_FLOAT16: return "float16";
    case DLP_DT_DOUBLE: return "float64";
    case DLP_DT_UINT32: return "uint32";
    case DLP_DT_UINT64: return "uint64";
    case DLP_DT_COMPLEX64: return "complex64";
    case DLP_DT_COMPLEX128: return "complex128";
    case DLP_DT_BFLOAT16: return "bfloat16";
    case DLP_DT_FLOAT8E4M3FN: return "float8e4m3fn";
    case DLP_DT_FLOAT8E4M3FNUZ: return "float8e4m3fnuz";
    case DLP_DT_FLOAT8E5M2: return "float8e5m2";
    case DLP_DT_FLOAT8E5M2FNUZ: return "float8e5m2fnuz";
    case DLP_DT_UINT4: return "uint4";
    case DLP_DT_INT4: return "int4";
    case DLP_DT_UNDEFINED: break;
    }
    return "undefined";
}

size_t dlp_dtype_size(dlp_dtype t) {
    switch (t) {
    case DLP_DT_BOOL: case DLP_DT_UINT8: case DLP_DT_INT8:
    case DLP_DT_FLOAT8E4M3FN: case DLP_DT_FLOAT8E4M3FNUZ:
    case DLP_DT_FLOAT8E5M2: case DLP_DT_FLOAT8E5M2FNUZ:
    case DLP_DT_UINT4: case DLP_DT_INT4: /* packed, rounded up */
        return 1;
    case DLP_DT_UINT16: case DLP_DT_INT16: case DLP_DT_FLOAT16:
    case DLP_DT_BFLOAT16:
        return 2;
    case DLP_DT_FLOAT: case DLP_DT_INT32: case DLP_DT_UINT32:
        return 4;
    case DLP_DT_INT64: case DLP_DT_UINT64: case DLP_DT_DOUBLE:
    case DLP_DT_COMPLEX64:
        return 8;
    case DLP_DT_COMPLEX128:
        return 16;
    case DLP_DT_STRING: case DLP_DT_UNDEFINED:
        break;
    }
    return 0;
}

int dlp_dtype_is_float(dlp_dtype t) {
    switch (t) {
    case DLP_DT_FLOAT: case DLP_DT_FLOAT16: case DLP_DT_DOUBLE:
    case DLP_DT_BFLOAT16: case DLP_DT_FLOAT8E4M3FN: case DLP_DT_FLOAT8E4M3FNUZ:
    case DLP_DT_FLOAT8E5M2: case DLP_DT_FLOAT8E5M2FNUZ:
        return 1;
    default:
        return 0;
    }
}
