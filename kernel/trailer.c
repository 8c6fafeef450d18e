// SPDX-License-Identifier: GPL-2.0
/*
 * mpip: building CM trailers and putting them on socket buffers.
 */
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/ip.h>
#include <linux/timekeeping.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/sock.h>

#include "mpip.h"

u32 mpip_now_us(void)
{
	return (u32)ktime_to_us(ktime_get());
}

/*
 * Collect up to @max IPv4 addresses of the namespace, with their
 * interfaces: not loopback, not host scope, and unless @all, not on an
 * interface set not to be advertised (links.c).  Addresses on interfaces
 * that are down count too: their paths stay, in state down, and come
 * back up with the link.
 */
unsigned int mpip_local_addrs(struct mpip_net *mn, struct mpip_laddr *la,
			      unsigned int max, bool all)
{
	const struct in_ifaddr *ifa;
	struct in_device *in_dev;
	struct net_device *dev;
	unsigned int n = 0;

	rcu_read_lock();
	for_each_netdev_rcu(mn->net, dev) {
		if (dev->flags & IFF_LOOPBACK)
			continue;
		if (!all && !mpip_link_advertised(mn, dev->ifindex))
			continue;
		in_dev = __in_dev_get_rcu(dev);
		if (!in_dev)
			continue;
		in_dev_for_each_ifa_rcu(ifa, in_dev) {
			if (ifa->ifa_scope == RT_SCOPE_HOST)
				continue;
			la[n].addr = ifa->ifa_local;
			la[n].ifindex = dev->ifindex;
			if (++n == max)
				goto out;
		}
	}
out:
	rcu_read_unlock();
	return n;
}

void mpip_cm_fill(struct mpip_net *mn, struct mpip_cm *cm, u8 flags,
		  bool with_addrs)
{
	struct mpip_laddr la[MPIP_CM_MAX_ADDRS];
	unsigned int i, n;

	memset(cm, 0, sizeof(*cm));
	cm->timestamp_us = mpip_now_us();
	cm->flags = flags;
	if (!with_addrs)
		return;
	n = mpip_local_addrs(mn, la, ARRAY_SIZE(la), false);
	for (i = 0; i < n; i++)
		cm->addrs[i] = (__force u32)la[i].addr;
	cm->naddrs = n;
}

/*
 * The link policy of @cm's list (as mpip_cm_fill() wrote it): each
 * address's tier and whether its link is metered, which IP_CHANGE CMs
 * carry in their extension (Documentation/wire-format.rst, "Extension
 * contents").
 */
void mpip_cm_lpol_fill(struct mpip_net *mn, const struct mpip_cm *cm,
		       struct mpip_cm_lpol *l)
{
	struct mpip_laddr la[MPIP_CM_MAX_ADDRS];
	unsigned int i, j, n;
	int ifi;

	memset(l, 0, sizeof(*l));
	n = mpip_local_addrs(mn, la, ARRAY_SIZE(la), false);
	for (i = 0; i < cm->naddrs; i++) {
		for (j = 0; j < n; j++) {
			if ((__force u32)la[j].addr != cm->addrs[i])
				continue;
			ifi = la[j].ifindex;
			mpip_cm_lpol_set(l, i, mpip_link_tier(mn, ifi),
					 mpip_link_metered(mn, ifi));
		}
	}
}

/* Bytes that can still be added to @skb without exceeding its route MTU. */
unsigned int mpip_skb_room(const struct sk_buff *skb)
{
	unsigned int mtu = dst_mtu(skb_dst(skb));

	return skb->len < mtu ? mtu - skb->len : 0;
}

/* Make room for @len more bytes at the tail and return where they go. */
static void *mpip_skb_tail_room(struct sk_buff *skb, unsigned int len)
{
	unsigned int nr;
	void *p;

	if (!skb_is_nonlinear(skb) || skb_has_frag_list(skb) ||
	    skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS) {
		if (skb_linearize_cow(skb))
			return NULL;
		if (skb_tailroom(skb) < len &&
		    pskb_expand_head(skb, 0, len - skb_tailroom(skb),
				     GFP_ATOMIC))
			return NULL;
		return skb_put(skb, len);
	}

	/*
	 * Paged data may be shared with the socket's retransmit queue: leave
	 * it alone and hang the trailer off a fragment of its own.
	 */
	if (skb_unclone(skb, GFP_ATOMIC))
		return NULL;
	p = netdev_alloc_frag(SKB_DATA_ALIGN(len));
	if (!p)
		return NULL;
	nr = skb_shinfo(skb)->nr_frags;
	skb_fill_page_desc(skb, nr, virt_to_head_page(p),
			   p - page_address(virt_to_head_page(p)), len);
	skb->len += len;
	skb->data_len += len;
	/* As pskb_expand_head(): a socket's accounting is not ours to change. */
	if (!skb->sk || skb->destructor == sock_edemux)
		skb->truesize += SKB_DATA_ALIGN(len);
	return p;
}

/*
 * Append the trailer for @cm, a CM to node @n with extension @ext (or
 * none) and counter @ctr (0: the node's next), to an IPv4 packet whose
 * transport checksum is already final (not CHECKSUM_PARTIAL), and fix the
 * IP header.
 */
int mpip_skb_add_cm(struct sk_buff *skb, struct mpip_node *n,
		    const struct mpip_cm *cm, const struct mpip_cm_ext *ext,
		    u64 ctr)
{
	unsigned int len = mpip_cm_wire_len(cm, ext);
	unsigned int off = skb->len - ip_hdrlen(skb);
	u8 buf[MPIP_CM_ANY_MAX_LEN];
	struct iphdr *iph;
	void *p;

	if (mpip_cm_seal(n, cm, ext, ip_hdr(skb)->protocol, off, buf,
			 len, ctr) != len)
		return -EINVAL;

	if (skb_ensure_writable(skb, ip_hdrlen(skb)))
		return -ENOMEM;
	p = mpip_skb_tail_room(skb, len);
	if (!p)
		return -ENOMEM;
	memcpy(p, buf, len);

	iph = ip_hdr(skb);
	iph->tot_len = htons(ntohs(iph->tot_len) + len);
	ip_send_check(iph);
	return 0;
}
