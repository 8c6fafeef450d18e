// SPDX-License-Identifier: GPL-2.0
/*
 * mpip: address and link events (paper section 3.4.3).  Any IPv4 address
 * change and any interface going up, down or changing carrier makes the
 * namespace re-evaluate its paths and advertise its addresses (IP_CHANGE).
 * The notifiers only queue work: they run under RTNL.
 */
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>

#include "mpip.h"

static int mpip_inetaddr_event(struct notifier_block *nb, unsigned long ev,
			       void *ptr)
{
	const struct in_ifaddr *ifa = ptr;

	if (ev == NETDEV_UP || ev == NETDEV_DOWN)
		mpip_addrs_changed(dev_net(ifa->ifa_dev->dev));
	return NOTIFY_DONE;
}

static int mpip_netdev_event(struct notifier_block *nb, unsigned long ev,
			     void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	/* Any event may change what a veth's other end is (gso.c). */
	mpip_gso_devs_changed();
	if (dev->flags & IFF_LOOPBACK)
		return NOTIFY_DONE;
	switch (ev) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		mpip_addrs_changed(dev_net(dev));
		break;
	case NETDEV_UNREGISTER:
		mpip_link_forget(dev);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block mpip_inetaddr_nb = {
	.notifier_call = mpip_inetaddr_event,
};

static struct notifier_block mpip_netdev_nb = {
	.notifier_call = mpip_netdev_event,
};

int mpip_notify_register(void)
{
	int err;

	err = register_inetaddr_notifier(&mpip_inetaddr_nb);
	if (err)
		return err;
	err = register_netdevice_notifier(&mpip_netdev_nb);
	if (err)
		unregister_inetaddr_notifier(&mpip_inetaddr_nb);
	return err;
}

void mpip_notify_unregister(void)
{
	unregister_netdevice_notifier(&mpip_netdev_nb);
	unregister_inetaddr_notifier(&mpip_inetaddr_nb);
}
