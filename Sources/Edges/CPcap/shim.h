#ifndef FAILCLOSED_CPCAP_SHIM_H
#define FAILCLOSED_CPCAP_SHIM_H
#include <pcap/pcap.h>
#endif
