/* core.p4 for the t4p4s compiler: the P4-16 core library.
 *
 * Same names, signatures and members as the core library of the P4-16
 * language specification, so programs written against the standard file
 * compile unchanged with `#include <core.p4>`.  Written for this project.
 */
#ifndef _CORE_P4_
#define _CORE_P4_

/* Standard errors; their order gives their numeric codes (NoError = 0). */
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

extern packet_in {
    /* Read a fixed-size header from the packet and advance the cursor. */
    void extract<T>(out T hdr);
    /* Read a header with one varbit field of the given size. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Read bits without advancing the cursor. */
    T lookahead<T>();
    /* Skip bits. */
    void advance(in bit<32> sizeInBits);
    /* Packet length in bytes (not supported by every target). */
    bit<32> length();
}

extern packet_out {
    /* Append a header (only if valid) or a struct/stack of headers. */
    void emit<T>(in T hdr);
}

/* Reject the packet with `toSignal` when `check` is false (parsers only). */
extern void verify(in bool check, in error toSignal);

@noWarn("unused")
action NoAction() {}

match_kind {
    exact,
    ternary,
    lpm
}

/* Compile-time assertion. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif /* _CORE_P4_ */
