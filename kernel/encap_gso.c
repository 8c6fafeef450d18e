// SPDX-License-Identifier: GPL-2.0
/*
 * mpip GSO for encapsulated segments: the segments of a TCP GSO packet
 * that output.c split to go inside UDP, each with its own trailer, leave
 * the host as one UDP GSO packet (SKB_GSO_UDP_L4), each a segment of it,
 * as a UDP socket with UDP_SEGMENT sends its datagrams; those that go
 * inside a fake TCP connection (ftcp.c), as one TCP GSO packet of it.
 *
 * Split one by one, each datagram takes its own pass through the rest of
 * the output path, the device, and every hop that forwards it: on a host
 * that is the CPU's work, not the link's.  As one GSO packet they pass
 * once, down to a device that cuts them apart (in hardware, or in
 * software in validate_xmit_skb()) into exactly the datagrams that would
 * have gone one by one; a veth passes the GSO packet on whole, and so do
 * the routers behind it, until the receiver's input hook splits it
 * (input.c, as GRO's merged datagrams).  Middleboxes on a wire never see
 * the difference.
 *
 * The first datagram becomes the GSO packet: the payloads of the others
 * (shim, inner segment, trailer) are copied behind its own, into pages
 * of its own.  Only datagrams of equal size can be segments, the
 * last may be shorter; each must fit the route's MTU whole.  A datagram
 * that does not fit the batch closes it and starts the next.
 */
#include <linux/ip.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/sock.h>

#include "mpip.h"

/*
 * Length of the outer header of @skb, a packet encap.c made: UDP, or a
 * fake TCP data segment (ftcp.c: no options).
 */
static unsigned int mpip_ebatch_hdr_len(const struct sk_buff *skb)
{
	return ip_hdr(skb)->protocol == IPPROTO_UDP ? sizeof(struct udphdr) :
						      MPIP_FTCP_HDR_LEN;
}

/* What @skb carries behind its outer header: shim, packet, trailer */
static unsigned int mpip_ebatch_payload(const struct sk_buff *skb)
{
	return skb->len - ip_hdrlen(skb) - mpip_ebatch_hdr_len(skb);
}

/*
 * May @skb go in a batch?  A UDP datagram, or a fake TCP data segment,
 * from our control port, with its checksum left to the device
 * (encap.c), neither GSO nor fragmented on the way, and not fragmented
 * by the route (or sized for its path past the route's exception,
 * mpip_out_size()): GSO cannot cut fragments.
 */
static bool mpip_ebatch_fits(const struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);

	if (iph->protocol == IPPROTO_UDP) {
		if (udp_hdr(skb)->source != htons(MPIP_CTRL_PORT))
			return false;
	} else if (iph->protocol != IPPROTO_TCP ||
		   tcp_hdr(skb)->source != htons(MPIP_CTRL_PORT) ||
		   tcp_hdr(skb)->doff * 4 != MPIP_FTCP_HDR_LEN) {
		return false;
	}
	return skb->ip_summed == CHECKSUM_PARTIAL && !skb_is_gso(skb) &&
	       !skb_has_frag_list(skb) && (iph->frag_off & htons(IP_DF)) &&
	       (skb->len <= dst_mtu(skb_dst(skb)) ||
		(IPCB(skb)->flags & IPSKB_FORWARDED));
}

/*
 * Does @skb continue the batch of @head as TCP segmentation would cut
 * it?  The same outer protocol; for fake TCP, the next sequence number
 * and the same acknowledgment, flags and window (tcp_gso_segment() copies
 * the head's header onto each segment and moves only the sequence
 * number; PSH stays on the last segment only, which the peer ignores).
 */
static bool mpip_ebatch_follows(const struct sk_buff *head,
				const struct sk_buff *skb)
{
	const struct tcphdr *h, *t;

	if (ip_hdr(skb)->protocol != ip_hdr(head)->protocol)
		return false;
	if (ip_hdr(skb)->protocol == IPPROTO_UDP)
		return true;
	h = tcp_hdr(head);
	t = tcp_hdr(skb);
	/* tcp_flag_word(): header length, flags and window */
	return ntohl(t->seq) == ntohl(h->seq) + mpip_ebatch_payload(head) &&
	       t->ack_seq == h->ack_seq && tcp_flag_word(t) == tcp_flag_word(h);
}

/*
 * Start batch @b with @skb, which it then owns, if @skb may head one: not
 * a clone, and not a zerocopy packet, whose pages are the sender's (and
 * may be freed as such: our own must not go among them).
 */
static bool mpip_ebatch_start(struct mpip_ebatch *b, struct sk_buff *skb)
{
	if (!mpip_ebatch_fits(skb) || skb_cloned(skb) || skb_zcopy(skb))
		return false;
	b->head = skb;
	b->seg_len = mpip_ebatch_payload(skb);
	b->segs = 1;
	b->closed = false;
	return true;
}

/*
 * Copy the payload of @skb, @len bytes, behind that of @b's head, in
 * pages of the batch's own: the last fragment grows while it can, else
 * the head gets one more.  False if it cannot take them (no memory,
 * fragments full); the head is then unchanged.
 */
static bool mpip_ebatch_copy(struct mpip_ebatch *b, const struct sk_buff *skb,
			     unsigned int len)
{
	struct sk_buff *head = b->head;
	struct skb_shared_info *si = skb_shinfo(head);
	struct page_frag *pf = &b->pf;
	int i = si->nr_frags;

	if (!skb_page_frag_refill(len, pf, GFP_ATOMIC))
		return false;
	if (!skb_can_coalesce(head, i, pf->page, pf->offset) &&
	    i >= MAX_SKB_FRAGS)
		return false;
	if (skb_copy_bits(skb, skb->len - len,
			  page_address(pf->page) + pf->offset, len))
		return false;
	if (skb_can_coalesce(head, i, pf->page, pf->offset)) {
		skb_frag_size_add(&si->frags[i - 1], len);
	} else {
		get_page(pf->page);
		skb_fill_page_desc(head, i, pf->page, pf->offset, len);
	}
	pf->offset += len;
	head->len += len;
	head->data_len += len;
	/* As mpip_skb_tail_room(): a socket's accounting is not ours. */
	if (!head->sk || head->destructor == sock_edemux)
		head->truesize += len;
	return true;
}

/*
 * @skb, a segment of the same TCP GSO packet as @head, is now inside it:
 * what @skb holds of its socket's send budget, @head holds from now on,
 * until the packet leaves, as @skb would have.  Its destructor (TCP's
 * tcp_wfree(), or sock_wfree()) gives back truesize, so truesize moves.
 * Else TCP small queues would take a batch of datagrams in a qdisc for
 * one.
 */
static void mpip_ebatch_own(struct sk_buff *head, struct sk_buff *skb)
{
	if (!skb->sk || skb->sk != head->sk ||
	    skb->destructor != head->destructor)
		return;
	head->truesize += skb->truesize;
	skb->destructor = NULL;
	skb->sk = NULL;
}

/*
 * Put @skb, an encapsulated datagram ready to go, in batch @b: as the
 * head of the batch if it has none, else as a segment of its head.
 * True if @b took @skb; if not, the caller sends the batch
 * (mpip_ebatch_take()) and tries again, or sends @skb on its own.
 */
bool mpip_ebatch_add(struct mpip_ebatch *b, struct sk_buff *skb)
{
	unsigned int len = mpip_ebatch_payload(skb);

	if (!b->head)
		return mpip_ebatch_start(b, skb);
	if (b->closed || len > b->seg_len || !mpip_ebatch_fits(skb) ||
	    !mpip_ebatch_follows(b->head, skb) ||
	    b->head->len + len > IP_MAX_MTU || !mpip_ebatch_copy(b, skb, len))
		return false;
	b->segs++;
	b->closed = len < b->seg_len;
	mpip_ebatch_own(b->head, skb);
	consume_skb(skb);
	return true;
}

/* The outer header of GSO packet @skb, a UDP datagram, covers it all. */
static void mpip_ebatch_udp(struct sk_buff *skb, unsigned int len)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct udphdr *uh = udp_hdr(skb);

	uh->len = htons(len);
	uh->check = ~csum_tcpudp_magic(iph->saddr, iph->daddr, len,
				       IPPROTO_UDP, 0);
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
}

/* Likewise for a fake TCP segment: no length field, only its checksum. */
static void mpip_ebatch_tcp(struct sk_buff *skb, unsigned int len)
{
	const struct iphdr *iph = ip_hdr(skb);

	tcp_hdr(skb)->check = ~csum_tcpudp_magic(iph->saddr, iph->daddr, len,
						 IPPROTO_TCP, 0);
	skb_shinfo(skb)->gso_type = SKB_GSO_TCPV4;
}

/*
 * Take the packet of batch @b, now empty: its head, as it came if it
 * took no segments, else made a UDP or TCP GSO packet of them.  NULL if
 * @b had none.  The checksum stays the device's to fill in, now per
 * segment.
 */
struct sk_buff *mpip_ebatch_take(struct mpip_ebatch *b)
{
	struct sk_buff *skb = b->head;
	unsigned int len;
	struct iphdr *iph;

	b->head = NULL;
	if (!skb || b->segs < 2)
		return skb;
	iph = ip_hdr(skb);
	iph->tot_len = htons(skb->len);
	ip_send_check(iph);
	len = skb->len - ip_hdrlen(skb);
	if (iph->protocol == IPPROTO_UDP)
		mpip_ebatch_udp(skb, len);
	else
		mpip_ebatch_tcp(skb, len);
	skb_shinfo(skb)->gso_size = b->seg_len;
	skb_shinfo(skb)->gso_segs = b->segs;
	return skb;
}

/* Done with batches of @b: give back its page (mpip_ebatch_take() first). */
void mpip_ebatch_release(struct mpip_ebatch *b)
{
	WARN_ON_ONCE(b->head);
	if (b->pf.page)
		put_page(b->pf.page);
	b->pf.page = NULL;
}
