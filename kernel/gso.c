// SPDX-License-Identifier: GPL-2.0
/*
 * mpip GSO: a TCP GSO packet whose route reaches the peer's stack without
 * a wire in between keeps its segmentation offload and carries one
 * CM for the whole packet, between its IP and TCP headers.
 *
 * A trailer belongs to every packet on a wire, and hardware cannot copy
 * one onto each segment it cuts, so GSO packets are normally split in
 * software (output.c).  That costs a pass through both stacks per
 * segment.  But a veth hands the packet, unsegmented, to the stack at its
 * other end: if that end is a plain interface (no bridge, bond or other
 * rx handler behind it) and the route has no gateway, the peer's input
 * hook is the next thing that sees the packet, and one CM for the whole
 * GSO packet is exactly as good as one trailer per segment.
 *
 * Such a packet travels as IP protocol MPIP_GSO_PROTO (an experimental
 * number, RFC 3692): should it reach a stack without mpip (the peer just
 * unloaded it) or a device that would segment it after all, it is
 * dropped there, since nothing knows how to receive or segment that
 * protocol; it can never turn its CM into TCP data.  The receiver
 * restores IPPROTO_TCP before conntrack and the filter table run.
 */
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <net/ip.h>
#include <net/route.h>

#include "mpip.h"

/*
 * Is @dev a veth whose other end delivers straight into an IP stack?
 * The veth driver names its other end under RCU (ndo_get_peer_dev, as
 * for bpf_redirect_peer()); its get_link_net() would need RTNL.  Caller
 * holds RCU.
 */
static bool mpip_gso_veth_direct(struct net_device *dev)
{
	const struct rtnl_link_ops *ops = dev->rtnl_link_ops;
	struct net_device *peer;

	if (!ops || strcmp(ops->kind, "veth") ||
	    !dev->netdev_ops->ndo_get_peer_dev)
		return false;
	peer = dev->netdev_ops->ndo_get_peer_dev(dev);
	return peer && !rcu_access_pointer(peer->rx_handler) &&
	       !netdev_master_upper_dev_get_rcu(peer);
}

/*
 * The answer of mpip_gso_veth_direct() for the device the last GSO packet
 * on this CPU went out on, valid while no device changed anywhere since
 * (@gen).  Asking costs a string compare, two indirect calls and a device
 * lookup per packet; the answer changes only with a netdevice event.
 */
struct mpip_gso_hint {
	const struct net_device *dev;
	unsigned int gen;
	bool direct;
};

static DEFINE_PER_CPU(struct mpip_gso_hint, mpip_gso_hint);
static atomic_t mpip_gso_gen = ATOMIC_INIT(1);

/* A device was added, removed, linked to an upper device or changed. */
void mpip_gso_devs_changed(void)
{
	atomic_inc(&mpip_gso_gen);
}

static bool mpip_gso_direct(struct net_device *dev)
{
	unsigned int gen = atomic_read(&mpip_gso_gen);
	struct mpip_gso_hint *h;
	bool direct;

	/* Process-context senders share the hint with softirqs. */
	local_bh_disable();
	h = this_cpu_ptr(&mpip_gso_hint);
	if (h->dev == dev && h->gen == gen) {
		direct = h->direct;
	} else {
		direct = mpip_gso_veth_direct(dev);
		h->dev = dev;
		h->gen = gen;
		h->direct = direct;
	}
	local_bh_enable();
	return direct;
}

/*
 * May @skb, a TCP GSO packet routed on @dst, stay one packet with
 * @cm_len bytes of trailer?  Caller holds RCU.
 */
bool mpip_gso_keep(struct mpip_net *mn, struct sk_buff *skb,
		   const struct dst_entry *dst, unsigned int cm_len)
{
	const struct rtable *rt = container_of(dst, struct rtable, dst);

	if (!READ_ONCE(mn->cfg.tx_gso))
		return false;
	if (skb->ip_summed != CHECKSUM_PARTIAL ||
	    !(skb_shinfo(skb)->gso_type & SKB_GSO_TCPV4) ||
	    cm_len != MPIP_DATA_CM_LEN || skb->len + cm_len > IP_MAX_MTU)
		return false;
	if (rt->rt_gw_family || !skb_gso_ok(skb, dst->dev->features))
		return false;
	return mpip_gso_direct(dst->dev);
}

/*
 * Put the data CM @cm between the IP and TCP headers of a kept GSO packet
 * and mark the packet.  The CM goes in front, not at the tail: TCP's clone
 * shares its pages and their list with the retransmit queue, but the
 * headers in front of the payload are the clone's own, so pushing the IP
 * header back into the headroom copies nothing, where a fragment at the
 * tail would first cost a copy of the skb's head (skb_unclone()).  The
 * TCP header does not move: the pending checksum stays valid.  @cm is a
 * data CM to node @n without addresses: mpip_gso_keep() admits no other.
 */
int mpip_gso_encap(struct sk_buff *skb, struct mpip_node *n,
		   const struct mpip_cm *cm)
{
	unsigned int ihl = ip_hdrlen(skb), len = mpip_cm_wire_len(cm, NULL);
	struct iphdr *iph;

	if (skb_cow_head(skb, len))
		return -ENOMEM;
	skb_push(skb, len);
	memmove(skb->data, skb->data + len, ihl);
	skb_reset_network_header(skb);
	if (mpip_cm_seal(n, cm, NULL, IPPROTO_TCP, 0, skb->data + ihl, len,
			 0) != len)
		return -EINVAL;
	iph = ip_hdr(skb);
	iph->protocol = MPIP_GSO_PROTO;
	iph->tot_len = htons(ntohs(iph->tot_len) + len);
	ip_send_check(iph);
	return 0;
}

/*
 * Take the CM of @len bytes out of a kept GSO packet again and give the
 * packet back its protocol: it is the TCP GSO packet the sender's TCP
 * passed on, with its checksum still to be filled in.
 */
int mpip_gso_decap(struct sk_buff *skb, unsigned int len)
{
	unsigned int ihl = ip_hdrlen(skb);
	struct iphdr *iph;

	if (skb_ensure_writable(skb, ihl + len))
		return -ENOMEM;
	memmove(skb->data + len, skb->data, ihl);
	__skb_pull(skb, len);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, ihl);
	iph = ip_hdr(skb);
	iph->protocol = IPPROTO_TCP;
	iph->tot_len = htons(ntohs(iph->tot_len) - len);
	ip_send_check(iph);
	return 0;
}

/*
 * Is @skb a kept GSO packet as an mpip sender makes them?  It must still
 * be the GSO packet with a pending checksum that a veth handed over.
 */
bool mpip_gso_is_kept(const struct sk_buff *skb)
{
	return ip_hdr(skb)->protocol == MPIP_GSO_PROTO && skb_is_gso(skb) &&
	       skb->ip_summed == CHECKSUM_PARTIAL &&
	       (skb_shinfo(skb)->gso_type & SKB_GSO_TCPV4);
}
