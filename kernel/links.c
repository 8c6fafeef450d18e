// SPDX-License-Identifier: GPL-2.0
/*
 * mpip per-interface settings (mpipctl link set).
 *
 * Each namespace keeps an xarray from ifindex to a value entry holding
 * MPIP_LINK_F_* bits, the interface's enum mpip_link_nat, tier and
 * metered flag among them (and a count of the backup links, those of
 * tier 1 or more, so that a namespace without any skips their lookups on
 * the packet path); an interface without an entry has the defaults, all
 * bits clear, so the array holds only the interfaces someone configured.
 * Writers hold RTNL, as does the netdev notifier that drops the entry of
 * an interface leaving the namespace: no setting outlives its interface
 * to be inherited by a later one with the same index.  Readers, on the
 * packet path and in the address work, need only RCU (xa_load()).
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/xarray.h>

#include "mpip.h"

/* The MPIP_LINK_F_* bits of interface @ifindex. */
u32 mpip_link_flags(struct mpip_net *mn, int ifindex)
{
	void *e = xa_load(&mn->links, ifindex);

	return e ? xa_to_value(e) : 0;
}

/* Are the addresses of interface @ifindex ours to advertise and use? */
bool mpip_link_advertised(struct mpip_net *mn, int ifindex)
{
	return !(mpip_link_flags(mn, ifindex) & MPIP_LINK_F_NO_ADVERTISE);
}

/* Interface @ifindex's tier, 0 to MPIP_LINK_TIER_MAX. */
unsigned int mpip_link_tier(struct mpip_net *mn, int ifindex)
{
	if (!READ_ONCE(mn->nbackup))
		return 0;
	return (mpip_link_flags(mn, ifindex) & MPIP_LINK_F_TIER) >>
	       MPIP_LINK_F_TIER_SHIFT;
}

/* Is interface @ifindex paid by the byte (rules with nometered avoid it)? */
bool mpip_link_metered(struct mpip_net *mn, int ifindex)
{
	return mpip_link_flags(mn, ifindex) & MPIP_LINK_F_METERED;
}

/*
 * Does interface @ifindex carry data only while no path of a lower tier
 * works (a backup link, of tier 1 or more)?
 */
bool mpip_link_backup(struct mpip_net *mn, int ifindex)
{
	return mpip_link_tier(mn, ifindex) > 0;
}

/* The enum mpip_link_nat in an interface's settings @flags. */
static u32 mpip_link_flags_nat(u32 flags)
{
	return (flags & MPIP_LINK_F_NAT) >> MPIP_LINK_F_NAT_SHIFT;
}

/* Interface @ifindex's enum mpip_link_nat. */
u32 mpip_link_nat(struct mpip_net *mn, int ifindex)
{
	return mpip_link_flags_nat(mpip_link_flags(mn, ifindex));
}

/*
 * The enum mpip_nat_mode of the paths from interface @ifindex: its own,
 * or the namespace's.
 */
u32 mpip_link_nat_mode(struct mpip_net *mn, int ifindex)
{
	u32 nat = mpip_link_nat(mn, ifindex);

	BUILD_BUG_ON(MPIP_LINK_NAT_NONE - MPIP_LINK_NAT_AUTO !=
		     MPIP_NAT_MODE_NONE - MPIP_NAT_MODE_AUTO ||
		     MPIP_LINK_NAT_UDP - MPIP_LINK_NAT_AUTO !=
		     MPIP_NAT_MODE_UDP - MPIP_NAT_MODE_AUTO ||
		     MPIP_LINK_NAT_FAKETCP - MPIP_LINK_NAT_AUTO !=
		     MPIP_NAT_MODE_FAKETCP - MPIP_NAT_MODE_AUTO);
	BUILD_BUG_ON(MPIP_LINK_NAT_FAKETCP >
		     MPIP_LINK_F_NAT >> MPIP_LINK_F_NAT_SHIFT);
	return nat ? nat - MPIP_LINK_NAT_AUTO + MPIP_NAT_MODE_AUTO :
		     READ_ONCE(mn->cfg.nat_mode);
}

/* Do settings @flags make an interface's paths fake TCP ones? */
static bool mpip_link_flags_ftcp(u32 flags)
{
	return mpip_link_flags_nat(flags) == MPIP_LINK_NAT_FAKETCP;
}

/* May settings @flags put an interface's paths inside UDP (auto or udp)? */
static bool mpip_link_flags_udp(u32 flags)
{
	u32 nat = mpip_link_flags_nat(flags);

	return nat == MPIP_LINK_NAT_AUTO || nat == MPIP_LINK_NAT_UDP;
}

/* Add @is - @was (each 0 or 1) to the count at @n; RTNL held. */
static void mpip_link_recount(unsigned int *n, bool was, bool is)
{
	if (was != is)
		WRITE_ONCE(*n, *n + (is ? 1 : -1));
}

/*
 * Count the backup links (tier 1 or more), the fake TCP ones and those
 * set to auto or udp, for the packet path's shortcuts.  RTNL held.
 */
static void mpip_link_count(struct mpip_net *mn, u32 old, u32 new)
{
	BUILD_BUG_ON(MPIP_LINK_TIER_MAX >
		     MPIP_LINK_F_TIER >> MPIP_LINK_F_TIER_SHIFT);
	mpip_link_recount(&mn->nbackup, old & MPIP_LINK_F_TIER,
			  new & MPIP_LINK_F_TIER);
	mpip_link_recount(&mn->nftcp, mpip_link_flags_ftcp(old),
			  mpip_link_flags_ftcp(new));
	mpip_link_recount(&mn->nudp, mpip_link_flags_udp(old),
			  mpip_link_flags_udp(new));
}

/*
 * The bytes a SYN's MSS leaves for the encapsulation of paths through
 * NATs: fake TCP's if the namespace's nat_mode or a link's is faketcp,
 * else UDP's if either may put a path inside UDP (auto or udp), else
 * none.
 */
unsigned int mpip_links_encap_room(struct mpip_net *mn)
{
	u32 mode = READ_ONCE(mn->cfg.nat_mode);

	if (mode == MPIP_NAT_MODE_FAKETCP || READ_ONCE(mn->nftcp))
		return MPIP_FTCP_ENCAP_LEN;
	if (mode != MPIP_NAT_MODE_NONE || READ_ONCE(mn->nudp))
		return MPIP_ENCAP_LEN;
	return 0;
}

/*
 * Set the bits @mask of interface @ifindex's settings to @flags.  Returns
 * 0, -ENODEV if the namespace has no such interface (loopback counts as
 * none: mpip never uses it) or -ENOMEM.  A change of what we advertise
 * re-evaluates the paths and tells the peers, as an address change does.
 */
int mpip_link_set(struct mpip_net *mn, int ifindex, u32 mask, u32 flags,
		  struct netlink_ext_ack *extack)
{
	struct net_device *dev;
	u32 old, new;
	int err = 0;

	rtnl_lock();
	dev = __dev_get_by_index(mn->net, ifindex);
	if (!dev || dev->flags & IFF_LOOPBACK) {
		NL_SET_ERR_MSG(extack, "no such interface in this namespace");
		err = -ENODEV;
		goto out;
	}
	old = mpip_link_flags(mn, ifindex);
	new = (old & ~mask) | (flags & mask);
	if (new == old)
		goto out;
	if (new)
		err = xa_err(xa_store(&mn->links, ifindex, xa_mk_value(new),
				      GFP_KERNEL));
	else
		xa_erase(&mn->links, ifindex);
	if (!err)
		mpip_link_count(mn, old, new);
out:
	rtnl_unlock();
	if (!err && new != old)
		mpip_addrs_changed(mn->net);
	return err;
}

/* Interface @dev leaves its namespace: forget its settings.  RTNL held. */
void mpip_link_forget(struct net_device *dev)
{
	struct mpip_net *mn = mpip_pernet(dev_net(dev));

	ASSERT_RTNL();
	mpip_link_count(mn, mpip_link_flags(mn, dev->ifindex), 0);
	xa_erase(&mn->links, dev->ifindex);
}

void mpip_links_init(struct mpip_net *mn)
{
	xa_init(&mn->links);
}

/* The namespace goes away; its interfaces are gone already. */
void mpip_links_destroy(struct mpip_net *mn)
{
	xa_destroy(&mn->links);
}
