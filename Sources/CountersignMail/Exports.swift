// Addresses, messages and errors live in CountersignMailFormat (no dependency, so that the fuzzer
// builds it alone); users of the SMTP client get them with it.
@_exported import CountersignMailFormat
